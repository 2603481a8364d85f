"""Query functions for migrations (evacuations here).

An evacuation's operation (:mod:`nova_forcedown.objects.evacuation`)
inserts its row (:func:`migration_create`) in the transaction that moves
the server; the agents then move it through Nova's statuses
(:data:`TRANSITIONS`). Rows are read as named tuples.
"""

import collections

from oslo_utils import timeutils
from oslo_utils import uuidutils
import sqlalchemy as sa

from nova_forcedown.db import engine
from nova_forcedown.db import models
from nova_forcedown.db import value_lists
from nova_forcedown import exception

_MIGRATIONS = models.Migration.__table__
_INSTANCES = models.Instance.__table__

MigrationRow = collections.namedtuple('MigrationRow',
                                      tuple(_MIGRATIONS.columns.keys()))

EVACUATION = 'evacuation'
# Migration statuses, as Nova names them.
ACCEPTED = 'accepted'
PRE_MIGRATING = 'pre-migrating'
DONE = 'done'
COMPLETED = 'completed'
ERROR = 'error'
FAILED = 'failed'

# An evacuation's status moves only along these edges: {to: the statuses
# it may come from}. Each agent moves its own step and never undoes
# another's: the destination's rebuild does not overwrite the source's
# ``completed``, nor a retry's ``failed``. The fencing guide draws it.
TRANSITIONS = {
    PRE_MIGRATING: (ACCEPTED,),
    DONE: (ACCEPTED, PRE_MIGRATING),
    COMPLETED: (ACCEPTED, PRE_MIGRATING, DONE),
    FAILED: (ACCEPTED, PRE_MIGRATING),
}

# Evacuations the source's agent has not yet cleaned up after: the source
# may still run a copy, so it may not be forced up (and its clean-up at
# restart takes them).
OPEN = (ACCEPTED, PRE_MIGRATING, DONE)

# Statuses in which a migration no longer involves its hosts, as Nova
# lists them for the delete of a compute service.
OVER = ('confirmed', 'reverted', ERROR, FAILED, COMPLETED, 'cancelled',
        DONE)

# Filters matched exactly, by column.
EXACT_FILTERS = ('instance_uuid', 'source_compute', 'status',
                 'migration_type', 'user_id', 'project_id')


@engine.writer
def migration_create(context, values, now):
    """Insert a migration of ``context``'s request; it as a row."""
    values = dict(values, uuid=uuidutils.generate_uuid(),
                  user_id=context.user_id, project_id=context.project_id,
                  hidden=False, created_at=now, deleted=0)
    result = context.connection.execute(_MIGRATIONS.insert(), values)
    values['id'] = result.inserted_primary_key[0]
    return MigrationRow(**{name: values.get(name)
                           for name in MigrationRow._fields})


@engine.reader
def migrations_get_all(context, exact=None, host=None, hidden=None,
                       changes_since=None, changes_before=None, limit=None,
                       marker=None):
    """Live migrations matching the filters, newest first.

    ``exact``: {column: value}; ``host`` matches the source or the
    destination; ``marker`` is a migration uuid (an unknown one is
    :class:`exception.MigrationMarkerNotFound`).
    """
    connection = context.connection
    criteria = [_MIGRATIONS.c.deleted == 0]
    for name, value in (exact or {}).items():
        criteria.append(_MIGRATIONS.c[name] == value)
    if host is not None:
        criteria.append(sa.or_(_MIGRATIONS.c.source_compute == host,
                               _MIGRATIONS.c.dest_compute == host))
    if hidden is not None:
        criteria.append(sa.func.coalesce(_MIGRATIONS.c.hidden,
                                         sa.false()) == hidden)
    if changes_since is not None:
        criteria.append(_MIGRATIONS.c.updated_at >= changes_since)
    if changes_before is not None:
        criteria.append(_MIGRATIONS.c.updated_at <= changes_before)
    if marker is not None:
        row = connection.execute(sa.select(
            _MIGRATIONS.c.created_at, _MIGRATIONS.c.id).where(
                _MIGRATIONS.c.uuid == marker)).first()
        if row is None:
            raise exception.MigrationMarkerNotFound(marker=marker)
        criteria.append(sa.or_(
            _MIGRATIONS.c.created_at < row.created_at,
            sa.and_(_MIGRATIONS.c.created_at == row.created_at,
                    _MIGRATIONS.c.id < row.id)))
    query = (sa.select(_MIGRATIONS).where(*criteria)
             .order_by(_MIGRATIONS.c.created_at.desc(),
                       _MIGRATIONS.c.id.desc()))
    if limit is not None:
        query = query.limit(limit)
    return [MigrationRow._make(row) for row in connection.execute(query)]


@engine.reader
def evacuation_get_latest(context, instance_uuid, dest_compute):
    """The newest evacuation of the server to ``dest_compute``, or None."""
    row = context.connection.execute(sa.select(_MIGRATIONS).where(
        _MIGRATIONS.c.instance_uuid == instance_uuid,
        _MIGRATIONS.c.migration_type == EVACUATION,
        _MIGRATIONS.c.dest_compute == dest_compute,
        _MIGRATIONS.c.deleted == 0).order_by(
            _MIGRATIONS.c.id.desc()).limit(1)).first()
    return None if row is None else MigrationRow._make(row)


@engine.reader
def evacuations_to_clean_up(context, hosts):
    """The evacuations a restarting agent of ``hosts`` looks at.

    Away from ``hosts`` and open (:data:`OPEN`) or failed, and to
    ``hosts`` and failed: in each, one of ``hosts`` may hold a copy of a
    server that is no longer its own.
    """
    hosts = list(hosts)
    return [MigrationRow._make(row) for row in context.connection.execute(
        sa.select(_MIGRATIONS).where(
            _MIGRATIONS.c.migration_type == EVACUATION,
            _MIGRATIONS.c.deleted == 0,
            sa.or_(sa.and_(_MIGRATIONS.c.source_compute.in_(hosts),
                           _MIGRATIONS.c.status.in_(OPEN + (FAILED,))),
                   sa.and_(_MIGRATIONS.c.dest_compute.in_(hosts),
                           _MIGRATIONS.c.status == FAILED)))
        .order_by(_MIGRATIONS.c.id))]


def _moved(connection, migration_id, status):
    """Move a migration to ``status`` if :data:`TRANSITIONS` allows it now.

    Whether it moved: False when another step got there first.
    """
    result = connection.execute(_MIGRATIONS.update().where(
        _MIGRATIONS.c.id == migration_id,
        _MIGRATIONS.c.status.in_(TRANSITIONS[status])).values(
            status=status, updated_at=timeutils.utcnow()))
    return result.rowcount == 1


@engine.writer
def migration_set_status(context, migration_id, status):
    """Move a migration to ``status`` along :data:`TRANSITIONS`; moved?"""
    return _moved(context.connection, migration_id, status)


@engine.writer
def migration_fail_unstarted(context, instance_uuid):
    """Fail the server's evacuations that no destination started; the rows.

    In the caller's transaction, for a retry judged on the first source
    while the destination still looks up: None when one of them started
    (pre-migrating), now or meanwhile, as the destination may be
    rebuilding the server; the caller then refuses, and its transaction
    undoes what this wrote. Each is failed on its status of this moment,
    so a destination's start and the retry never both win.
    """
    connection = context.connection
    rows = _open_evacuations(connection, instance_uuid)
    if not rows or any(row.status != ACCEPTED for row in rows):
        return None
    for row in rows:
        failed = connection.execute(_MIGRATIONS.update().where(
            _MIGRATIONS.c.id == row.id,
            _MIGRATIONS.c.status == ACCEPTED).values(
                status=FAILED, updated_at=timeutils.utcnow()))
        if failed.rowcount != 1:
            return None
    return rows


@engine.reader
def open_evacuation_sources(context, instance_uuid):
    """The sources of the server's evacuations not yet rebuilt."""
    return sorted({row.source_compute for row in _open_evacuations(
        context.connection, instance_uuid)})


def _open_evacuations(connection, instance_uuid):
    return [MigrationRow._make(row) for row in connection.execute(
        sa.select(_MIGRATIONS).where(
            _MIGRATIONS.c.instance_uuid == instance_uuid,
            _MIGRATIONS.c.migration_type == EVACUATION,
            _MIGRATIONS.c.status.in_(TRANSITIONS[FAILED]),
            _MIGRATIONS.c.deleted == 0).order_by(_MIGRATIONS.c.id))]


@engine.writer
def migration_fail_open(context, instance_uuid):
    """Fail the server's evacuations not yet rebuilt; the rows as they were.

    In the caller's transaction. A retried evacuation supersedes them:
    their destination never finished, and its rebuild, if it ever
    resumes, finds them failed.
    """
    connection = context.connection
    rows = _open_evacuations(connection, instance_uuid)
    for row in rows:
        _moved(connection, row.id, FAILED)
    return rows


@engine.reader
def evacuated_names(context, hosts):
    """The names of the servers that ever left ``hosts`` by evacuation.

    Whatever the evacuation's status and wherever the server is now,
    deleted or not: what a simulated host must not make again.
    """
    if not hosts:
        return set()
    return set(context.connection.execute(
        sa.select(_INSTANCES.c.display_name).distinct()
        .select_from(_MIGRATIONS.join(
            _INSTANCES, _INSTANCES.c.uuid == _MIGRATIONS.c.instance_uuid))
        .where(_MIGRATIONS.c.deleted == 0,
               _MIGRATIONS.c.source_compute.in_(list(hosts)),
               _MIGRATIONS.c.migration_type == EVACUATION)).scalars())


# Built once: every force-down of a host reads it, and building it cost
# more than running it.
_OPEN_EVACUATION_COUNTS = (
    sa.select(_MIGRATIONS.c.status, sa.func.count())
    .where(_MIGRATIONS.c.source_compute == sa.bindparam('host'),
           _MIGRATIONS.c.migration_type == EVACUATION,
           value_lists.one_of(_MIGRATIONS.c.status, OPEN),
           _MIGRATIONS.c.deleted == 0)
    .group_by(_MIGRATIONS.c.status))


@engine.reader
def open_evacuation_counts(context, host):
    """{status: count} of the evacuations away from ``host`` still open."""
    return dict(context.connection.execute(
        _OPEN_EVACUATION_COUNTS, {'host': host}).all())


@engine.reader
def host_has_migrations_in_progress(context, host):
    """Whether a migration from or to ``host`` is not yet :data:`OVER`."""
    query = sa.select(_MIGRATIONS.c.id).where(
        sa.or_(_MIGRATIONS.c.source_compute == host,
               _MIGRATIONS.c.dest_compute == host),
        _MIGRATIONS.c.status.not_in(OVER),
        _MIGRATIONS.c.deleted == 0).limit(1)
    return context.connection.execute(query).first() is not None
