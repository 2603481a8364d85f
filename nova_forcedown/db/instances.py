"""Query functions for servers: the listing with Nova's filters and paging,
and one server by uuid.

The same transaction context as :mod:`nova_forcedown.db.engine`. A listing is
one statement (two with a marker); rows are read with SQLAlchemy Core as
:class:`InstanceRow` named tuples, no ORM object per row.
"""

import collections
import functools

from oslo_db import exception as db_exc
from oslo_utils import timeutils
import sqlalchemy as sa

from nova_forcedown.db import bounds
from nova_forcedown.db import engine
from nova_forcedown.db import models
from nova_forcedown.db import tags as db_tags
from nova_forcedown import exception

_INSTANCES = models.Instance.__table__
_TAGS = models.Tag.__table__
_FLAVORS = models.Flavor.__table__
_EXTRA_SPECS = models.FlavorExtraSpec.__table__

# The flavor values an instance keeps a copy of, as Nova's instance does.
FLAVOR_COPY_COLUMNS = ('flavorid', 'name', 'memory_mb', 'vcpus', 'root_gb',
                       'ephemeral_gb', 'swap', 'rxtx_factor', 'vcpu_weight',
                       'disabled', 'is_public', 'description')

InstanceRow = collections.namedtuple('InstanceRow',
                                     tuple(_INSTANCES.columns.keys()))

# Nova's default order: newest first, the id breaking ties.
DEFAULT_SORT = (('created_at', 'desc'), ('id', 'desc'))

# Filters matched as a regular expression, as Nova's: found anywhere in
# the column, by the database's own operator (PostgreSQL ``~``, MariaDB
# REGEXP, on SQLite REGEXP of the function :mod:`.engine` registers).
REGEX_FILTERS = {'node': 'node', 'name': 'display_name',
                 'hostname': 'hostname'}


def _regex(pattern, dialect):
    """``pattern`` as Nova hands it to ``dialect``'s operator.

    On MySQL and MariaDB Nova escapes every ``|``: a bare one was an
    error of MySQL's older regular expressions. ``a|b`` there is the
    three characters, elsewhere either letter.
    """
    return pattern.replace('|', '\\|') if dialect == 'mysql' else pattern


def _criteria(matching, dialect):
    found = []
    for name, value in matching.exact.items():
        found.append(_INSTANCES.c[name] == bounds.compared(value))
    for name, value in matching.regex.items():
        found.append(_INSTANCES.c[REGEX_FILTERS[name]].regexp_match(
            _regex(value, dialect)))
    found.extend(db_tags.criteria(
        _INSTANCES.c.uuid, every=matching.tags, any_of=matching.tags_any,
        not_every=matching.not_tags, none_of=matching.not_tags_any))
    if matching.vm_states is not None:
        found.append(_INSTANCES.c.vm_state.in_(matching.vm_states))
    if matching.task_states is not None:
        found.append(_in_or_null(_INSTANCES.c.task_state,
                                 matching.task_states))
    if matching.locked is not None:
        found.append(_INSTANCES.c.locked_by.is_not(None) if matching.locked
                     else _INSTANCES.c.locked_by.is_(None))
    # A server never updated changed when it was created, as its view
    # shows it.
    changed = sa.func.coalesce(_INSTANCES.c.updated_at,
                               _INSTANCES.c.created_at)
    if matching.changes_since is not None:
        found.append(changed >= matching.changes_since)
    if matching.changes_before is not None:
        found.append(changed <= matching.changes_before)
    if matching.flavor is not None:
        found.append(_INSTANCES.c.instance_type_id.in_(
            sa.select(_FLAVORS.c.id).where(
                _FLAVORS.c.flavorid == matching.flavor)))
    if matching.deleted is True:
        found.append(_INSTANCES.c.deleted != 0)
    elif matching.deleted is False:
        found.append(_INSTANCES.c.deleted == 0)
    return found


def _in_or_null(column, values):
    named = [value for value in values if value is not None]
    either = [column.in_(named)] if named else []
    if len(named) != len(values):
        either.append(column.is_(None))
    return sa.or_(*either) if either else sa.false()


def _order(sort):
    columns = []
    for key, direction in sort:
        column = _INSTANCES.c[key]
        columns.append(column.desc() if direction == 'desc' else column.asc())
    return columns


def _after(marker, sort):
    """Rows after ``marker`` in the order ``sort`` (keys then directions).

    (k1 > m1) or (k1 = m1 and k2 > m2) or ..., each comparison turned by
    its direction; the last key is unique (id), so the order is total.
    """
    branches = []
    for position, (key, direction) in enumerate(sort):
        equal = [_INSTANCES.c[prior] == getattr(marker, prior)
                 for prior, _ in sort[:position]]
        column, value = _INSTANCES.c[key], getattr(marker, key)
        beyond = column < value if direction == 'desc' else column > value
        branches.append(sa.and_(*equal, beyond))
    return sa.or_(*branches)


@functools.lru_cache(maxsize=64)
def _row_type(columns):
    """The named tuple of rows of ``columns``.

    Brief listings ask for a few sets: the brief columns and sort keys.
    """
    return collections.namedtuple('InstanceColumns', columns)


@engine.reader
def instance_get_all(context, matching, limit=None, marker=None,
                     sort=DEFAULT_SORT, columns=None):
    """Servers matching ``matching``, a page of them in ``sort`` order.

    ``matching`` is the objects' ``InstanceFilters``; ``sort`` is ((key,
    'asc'|'desc'), ...) and ends in a unique key. The page starts after
    the server whose uuid is ``marker`` and holds at most ``limit``.
    Rows are :class:`InstanceRow`, or with ``columns`` (names) named
    tuples of those columns only.

    An unknown marker is :class:`exception.MarkerNotFound`; the marker is
    looked up among the rows the filters' project scope allows. A regular
    expression the database refuses (one Python's ``re`` takes that
    PostgreSQL or MariaDB does not) is :class:`exception.InvalidRegex`.
    """
    connection = context.connection
    criteria = _criteria(matching, connection.dialect.name)
    if marker is not None:
        scope = [_INSTANCES.c.project_id == matching.exact['project_id']] \
            if 'project_id' in matching.exact else []
        row = connection.execute(sa.select(_INSTANCES).where(
            _INSTANCES.c.uuid == marker, *scope)).first()
        if row is None:
            raise exception.MarkerNotFound(marker=marker)
        criteria.append(_after(row, sort))
    if columns is None:
        selected, row_type = _INSTANCES.columns, InstanceRow
    else:
        columns = tuple(dict.fromkeys(columns))
        selected = [_INSTANCES.c[name] for name in columns]
        row_type = _row_type(columns)
    query = sa.select(*selected).where(*criteria).order_by(*_order(sort))
    if limit is not None:
        query = query.limit(limit)
    try:
        rows = connection.execute(query)
    except (db_exc.DBError, sa.exc.DBAPIError) as exc:
        if not (matching.regex and _refused_regex(exc)):
            raise
        raise exception.InvalidRegex(
            patterns=', '.join(sorted(matching.regex.values())))
    return [row_type._make(row) for row in rows]


# PostgreSQL's SQLSTATE of an invalid regular expression; MariaDB's error
# of its regular expression library.
_PG_INVALID_REGEX = '2201B'
_MYSQL_REGEXP_ERROR = 1139


def _refused_regex(exc):
    """Whether a database error is its refusal of a regular expression.

    oslo.db wraps PostgreSQL's in a DBError; MariaDB's is SQLAlchemy's
    OperationalError. Either way the driver's error tells.
    """
    wrapped = getattr(exc, 'inner_exception', None) or exc
    driver_error = getattr(wrapped, 'orig', wrapped)
    # psycopg2 names a SQLSTATE pgcode, psycopg 3 sqlstate.
    if _PG_INVALID_REGEX in (getattr(driver_error, 'pgcode', None),
                             getattr(driver_error, 'sqlstate', None)):
        return True
    args = getattr(driver_error, 'args', ())
    return bool(args) and args[0] == _MYSQL_REGEXP_ERROR


@functools.lru_cache(maxsize=None)
def _server_query(of_project, deleted_too=False, locked=False):
    """The statement reading server ``:uuid``, built once per variant.

    ``of_project``: only if it is project ``:project_id``'s; ``locked``:
    its row locked (FOR UPDATE) until the transaction ends. Every action
    on a server reads it so: building the statement each time would cost
    more than running it.
    """
    criteria = [_INSTANCES.c.uuid == sa.bindparam('uuid')]
    if not deleted_too:
        criteria.append(_INSTANCES.c.deleted == 0)
    if of_project:
        criteria.append(_INSTANCES.c.project_id == sa.bindparam('project_id'))
    query = (sa.select(_INSTANCES).where(*criteria)
             .order_by(_INSTANCES.c.id.desc()).limit(1))
    return query.with_for_update() if locked else query


# An UPDATE of server ``:server_id``; what it sets is the other parameters.
_UPDATE_SERVER = _INSTANCES.update().where(
    _INSTANCES.c.id == sa.bindparam('server_id'))


@engine.reader
def instance_get_by_uuid(context, uuid, project_id=None, deleted_too=False):
    """The live server ``uuid`` (of ``project_id``, when given).

    With ``deleted_too``, a deleted one as well (the newest, should a
    uuid have been reused).
    """
    query = _server_query(project_id is not None, deleted_too=deleted_too)
    row = context.connection.execute(
        query, {'uuid': uuid, 'project_id': project_id}).first()
    if row is None:
        raise exception.InstanceNotFound(instance_id=uuid)
    return InstanceRow._make(row)


@functools.lru_cache(maxsize=None)
def _server_with_tags_query(of_project):
    """The live server ``:uuid`` and its tags: a row per tag, or one row.

    A uuid is unique (even among deleted servers), so no row repeats
    another but for its tag.
    """
    criteria = [_INSTANCES.c.uuid == sa.bindparam('uuid'),
                _INSTANCES.c.deleted == 0]
    if of_project:
        criteria.append(_INSTANCES.c.project_id == sa.bindparam('project_id'))
    return (sa.select(_INSTANCES, _TAGS.c.tag.label('tag_of_server'))
            .select_from(_INSTANCES.outerjoin(
                _TAGS, _TAGS.c.resource_id == _INSTANCES.c.uuid))
            .where(*criteria).order_by(_TAGS.c.tag))


@engine.reader
def instance_get_with_tags(context, uuid, project_id=None):
    """(the live server ``uuid``, its tags in order), in one statement.

    As :func:`instance_get_by_uuid`, for a server shown with its tags:
    one statement fewer, a round trip fewer on a database server.
    """
    rows = context.connection.execute(
        _server_with_tags_query(project_id is not None),
        {'uuid': uuid, 'project_id': project_id}).all()
    if not rows:
        raise exception.InstanceNotFound(instance_id=uuid)
    width = len(InstanceRow._fields)
    return (InstanceRow._make(rows[0][:width]),
            [row[width] for row in rows if row[width] is not None])


@engine.reader
def instance_hosts(context, uuids):
    """{uuid: host} of the live servers among ``uuids``."""
    if not uuids:
        return {}
    return dict(context.connection.execute(
        sa.select(_INSTANCES.c.uuid, _INSTANCES.c.host).where(
            _INSTANCES.c.uuid.in_(sorted(set(uuids))),
            _INSTANCES.c.deleted == 0)).all())


@engine.reader
def flavor_copy(context, name):
    """(flavors.id, the copy an instance keeps) of flavor ``name``, or None.

    The copy holds :data:`FLAVOR_COPY_COLUMNS` and ``extra_specs``.
    """
    row = context.connection.execute(
        sa.select(_FLAVORS.c.id, *(_FLAVORS.c[name]
                                   for name in FLAVOR_COPY_COLUMNS))
        .where(_FLAVORS.c.name == name)).first()
    if row is None:
        return None
    specs = context.connection.execute(
        sa.select(_EXTRA_SPECS.c.key, _EXTRA_SPECS.c.value)
        .where(_EXTRA_SPECS.c.flavor_id == row.id))
    copy = {name: getattr(row, name) for name in FLAVOR_COPY_COLUMNS}
    copy['extra_specs'] = {key: value for key, value in specs}
    return row.id, copy


# ------------------------------------------------------------- state changes

# Most hosts an agent's task query names in its statement.
_HOSTS_IN_QUERY = 500


@engine.writer
def instance_get_locked(context, uuid, project_id=None):
    """The live server ``uuid``, its row locked until the transaction ends.

    InstanceNotFound if there is none, or if ``project_id`` is given and
    it is another project's.
    """
    found = context.connection.execute(
        _server_query(project_id is not None, locked=True),
        {'uuid': uuid, 'project_id': project_id}).first()
    if found is None:
        raise exception.InstanceNotFound(instance_id=uuid)
    return InstanceRow._make(found)


@engine.writer
def instance_update(context, server, values):
    """Write ``values`` to the row of ``server``; the row as it now is.

    A server deleted so loses its tags, as in Nova.
    """
    context.connection.execute(_UPDATE_SERVER,
                               dict(values, server_id=server.id))
    if values.get('deleted'):
        db_tags.delete(context, [server.uuid])
    return server._replace(**values)


@engine.reader
def instance_get_tasks(context, hosts, task_states, uuids=None):
    """Live servers on ``hosts`` whose task_state is one of ``task_states``.

    One query on the task_state index: the tasks waiting are few. The
    hosts of an agent may be thousands; beyond :data:`_HOSTS_IN_QUERY`
    they are matched here rather than in the statement. ``uuids``: only
    among these servers.
    """
    wanted = set(hosts)
    criteria = [_INSTANCES.c.task_state.in_(task_states),
                _INSTANCES.c.deleted == 0]
    if uuids is not None:
        criteria.append(_INSTANCES.c.uuid.in_(sorted(uuids)))
    if len(wanted) <= _HOSTS_IN_QUERY:
        criteria.append(_INSTANCES.c.host.in_(sorted(wanted)))
    rows = context.connection.execute(sa.select(_INSTANCES).where(
        *criteria).order_by(_INSTANCES.c.updated_at, _INSTANCES.c.id))
    return [InstanceRow._make(row) for row in rows if row.host in wanted]


@engine.writer
def instance_finish_task(context, uuid, host, task_state, values):
    """Write ``values`` if server ``uuid`` is on ``host``, in ``task_state``.

    False when the task is gone (a reset cleared it, the server was
    deleted, a retried evacuation moved it to another host): what the
    host did is then not written over what the API decided since.
    """
    values = dict(values, updated_at=timeutils.utcnow())
    result = context.connection.execute(_INSTANCES.update().where(
        _INSTANCES.c.uuid == uuid, _INSTANCES.c.deleted == 0,
        _INSTANCES.c.host == host,
        _INSTANCES.c.task_state == task_state).values(**values))
    if result.rowcount != 1:
        return False
    if values.get('deleted'):
        db_tags.delete(context, [uuid])
    return True


@engine.writer
def instance_create(context, values, tags=()):
    """Insert a server row and its ``tags``; the row as stored.

    The row is an :class:`InstanceRow`.
    """
    server_id = models.insert(context.connection, _INSTANCES, values)
    db_tags.add(context, values['uuid'], tags)
    return InstanceRow._make(context.connection.execute(
        sa.select(_INSTANCES).where(_INSTANCES.c.id == server_id)).one())


@engine.reader
def instance_power_states(context, hosts):
    """(uuid, host, vm_state, task_state, power_state) of ``hosts``' servers.

    What a power-state sync compares, and nothing else: an agent of a
    thousand hosts reads ten thousand of these in its heartbeat.
    """
    if not hosts:
        return []
    columns = _INSTANCES.c
    return context.connection.execute(sa.select(
        columns.uuid, columns.host, columns.vm_state, columns.task_state,
        columns.power_state).where(
            columns.deleted == 0,
            columns.host.in_(sorted(set(hosts))))).all()


@engine.reader
def instance_get_all_by_hosts(context, hosts):
    """Live servers on any of ``hosts``, in id order, in one query."""
    if not hosts:
        return []
    rows = context.connection.execute(sa.select(_INSTANCES).where(
        _INSTANCES.c.deleted == 0,
        _INSTANCES.c.host.in_(sorted(set(hosts)))).order_by(_INSTANCES.c.id))
    return [InstanceRow._make(row) for row in rows]


# Names per query: well under every backend's limit of bound parameters.
_NAMES_PER_QUERY = 500


@engine.reader
def names_among(context, names):
    """Those of ``names`` that a server has or had (deleted ones too)."""
    names = sorted(set(names))
    found = set()
    for first in range(0, len(names), _NAMES_PER_QUERY):
        found.update(context.connection.execute(
            sa.select(_INSTANCES.c.display_name).distinct().where(
                _INSTANCES.c.display_name.in_(
                    names[first:first + _NAMES_PER_QUERY]))).scalars())
    return found


@engine.writer
def instance_lock_all_on_host(context, host):
    """The live servers of ``host``, in id order, their rows locked."""
    rows = context.connection.execute(
        sa.select(_INSTANCES).where(_INSTANCES.c.host == host,
                                    _INSTANCES.c.deleted == 0)
        .order_by(_INSTANCES.c.id).with_for_update())
    return [InstanceRow._make(row) for row in rows]


# Ids per UPDATE: well under every backend's limit of bound parameters.
_IDS_PER_UPDATE = 500


@engine.writer
def instance_update_many(context, changes):
    """Write each server's values: ``changes`` is [(row, values)].

    One UPDATE per distinct set of values (and per _IDS_PER_UPDATE
    servers), however many servers share it.
    """
    ids_by_values = {}
    for row, values in changes:
        ids_by_values.setdefault(tuple(sorted(values.items())),
                                 []).append(row.id)
    for values, ids in ids_by_values.items():
        for start in range(0, len(ids), _IDS_PER_UPDATE):
            context.connection.execute(_INSTANCES.update().where(
                _INSTANCES.c.id.in_(ids[start:start + _IDS_PER_UPDATE]))
                .values(**dict(values)))
