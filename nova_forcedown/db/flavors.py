"""Query functions for flavors, their extra specs and their projects.

The same transaction context as :mod:`nova_forcedown.db.engine`. A flavor is
read with its extra specs; a listing of any number of them is two
statements (three with a marker). Rows are deleted, not soft-deleted, as
in Nova's API database.

Visibility is Nova's: an admin sees every flavor; anyone else sees the
public ones and the private ones shared with their project, and any other
flavor does not exist for them.
"""

import collections
import functools

from oslo_db import exception as db_exc
from oslo_utils import timeutils
import sqlalchemy as sa

from nova_forcedown.db import bounds
from nova_forcedown.db import engine
from nova_forcedown.db import models
from nova_forcedown.db import value_lists
from nova_forcedown import exception

_FLAVORS = models.Flavor.__table__
_SPECS = models.FlavorExtraSpec.__table__
_PROJECTS = models.FlavorProject.__table__

# The columns a listing may be sorted by, as Nova's schema names them.
SORT_KEYS = ('created_at', 'description', 'disabled', 'ephemeral_gb',
             'flavorid', 'id', 'is_public', 'memory_mb', 'name', 'root_gb',
             'rxtx_factor', 'swap', 'updated_at', 'vcpu_weight', 'vcpus')

FlavorRow = collections.namedtuple(
    'FlavorRow', tuple(column.name for column in _FLAVORS.columns) +
    ('extra_specs',))

# Filters of flavor_get_all: each None means "no such filter".
Filters = collections.namedtuple(
    'Filters', ('is_public', 'disabled', 'min_memory_mb', 'min_root_gb',
                'name'))
Filters.__new__.__defaults__ = (None,) * len(Filters._fields)


def _shared_with(project_id):
    return _FLAVORS.c.id.in_(
        sa.select(_PROJECTS.c.flavor_id)
        .where(_PROJECTS.c.project_id == project_id))


def _visible(context):
    """The criteria of the flavors ``context`` may see at all."""
    if context.is_admin:
        return []
    return [sa.or_(_FLAVORS.c.is_public.is_(sa.true()),
                   _shared_with(context.project_id))]


def _is_public_criteria(context, is_public):
    """Nova's is_public filter: true adds the caller's private flavors."""
    if is_public is None:
        return []
    if is_public and context.project_id is not None:
        return [sa.or_(_FLAVORS.c.is_public.is_(sa.true()),
                       _shared_with(context.project_id))]
    return [_FLAVORS.c.is_public.is_(sa.true() if is_public else sa.false())]


# Built once: building a statement cost SQLAlchemy more than SQLite's
# running it, on every flavor shown.
_SPECS_OF_FLAVORS = (
    sa.select(_SPECS.c.flavor_id, _SPECS.c.key, _SPECS.c.value)
    .where(value_lists.in_values(_SPECS.c.flavor_id, 'ids'))
    .order_by(_SPECS.c.key))


@functools.lru_cache(maxsize=None)
def _one_flavor_query(sees_every_flavor):
    """One flavor by ``:flavorid`` with its extra specs, built once per shape.

    A row per extra spec, in the order of their keys, or one row with no
    spec: a flavorid is unique, so the rows differ only in their spec.
    For a caller that does not see every flavor, only a public one or one
    shared with project ``:project_id``.
    """
    query = (sa.select(_FLAVORS, _SPECS.c.key.label('spec_key'),
                       _SPECS.c.value.label('spec_value'))
             .select_from(_FLAVORS.outerjoin(
                 _SPECS, _SPECS.c.flavor_id == _FLAVORS.c.id))
             .where(_FLAVORS.c.flavorid == sa.bindparam('flavorid'))
             .order_by(_SPECS.c.key))
    if sees_every_flavor:
        return query
    return query.where(sa.or_(
        _FLAVORS.c.is_public.is_(sa.true()),
        _shared_with(sa.bindparam('project_id'))))


def _with_specs(connection, rows):
    """FlavorRows of ``rows``, with their extra specs in one statement."""
    rows = list(rows)
    specs = collections.defaultdict(dict)
    if rows:
        for flavor_id, key, value in connection.execute(
                _SPECS_OF_FLAVORS, {'ids': [row.id for row in rows]}):
            specs[flavor_id][key] = value
    return [FlavorRow(*row, extra_specs=specs[row.id]) for row in rows]


def _read_one(connection, context, flavorid):
    """The FlavorRow of ``flavorid`` and its extra specs, in one statement."""
    rows = connection.execute(
        _one_flavor_query(bool(context.is_admin)),
        {'flavorid': flavorid, 'project_id': context.project_id}).all()
    if not rows:
        raise exception.FlavorNotFound(flavor_id=flavorid)
    width = len(_FLAVORS.columns)
    return FlavorRow(*rows[0][:width], extra_specs={
        row[width]: row[width + 1] for row in rows if row[width] is not None})


@engine.reader
def flavor_get_by_flavor_id(context, flavorid):
    """The flavor ``flavorid`` as ``context`` may see it; FlavorNotFound."""
    return _read_one(context.connection, context, flavorid)


@engine.reader
def flavor_get_all(context, filters=Filters(), sort_key='flavorid',
                   sort_dir='asc', limit=None, marker=None):
    """The flavors ``context`` sees that pass ``filters``, one page of them.

    Ordered by ``sort_key`` then id; ``marker`` is the flavorid of the row
    before the page (MarkerNotFound when it is not one ``context`` sees).
    """
    connection = context.connection
    criteria = _visible(context) + _is_public_criteria(context,
                                                       filters.is_public)
    if filters.disabled is not None:
        criteria.append(_FLAVORS.c.disabled.is_(
            sa.true() if filters.disabled else sa.false()))
    if filters.min_memory_mb is not None:
        criteria.append(
            _FLAVORS.c.memory_mb >= bounds.compared(filters.min_memory_mb))
    if filters.min_root_gb is not None:
        criteria.append(
            _FLAVORS.c.root_gb >= bounds.compared(filters.min_root_gb))
    if filters.name is not None:
        # REGEXP on SQLite and MySQL, ~ on PostgreSQL, as in Nova.
        criteria.append(_FLAVORS.c.name.regexp_match(filters.name))
    marker_row = None
    if marker is not None:
        marker_row = connection.execute(
            sa.select(_FLAVORS).where(_FLAVORS.c.flavorid == marker,
                                      *_visible(context))).first()
        if marker_row is None:
            raise exception.MarkerNotFound(marker=marker)
    query = _page(sa.select(_FLAVORS).where(*criteria), sort_key, sort_dir,
                  marker_row)
    if limit is not None:
        query = query.limit(limit)
    return _with_specs(connection, connection.execute(query))


def _page(query, sort_key, sort_dir, marker_row):
    """``query`` ordered by ``sort_key`` then id, after ``marker_row``.

    A NULL sorts before any value, as MySQL and SQLite sort it, on every
    backend, so that a marker means the same page everywhere.
    """
    column, row_id = _FLAVORS.c[sort_key], _FLAVORS.c.id
    descending = sort_dir == 'desc'
    has_value = sa.case((column.is_(None), 0), else_=1)
    order = [has_value, column, row_id]
    query = query.order_by(*(term.desc() if descending else term.asc()
                             for term in order))
    if marker_row is None:
        return query
    value, marker_id = getattr(marker_row, sort_key), marker_row.id
    after_id = row_id < marker_id if descending else row_id > marker_id
    if value is None:
        same = sa.and_(column.is_(None), after_id)
        return query.where(same if descending
                           else sa.or_(column.is_not(None), same))
    same = sa.and_(column == value, after_id)
    if descending:
        return query.where(sa.or_(column < value, column.is_(None), same))
    return query.where(sa.or_(column > value, same))


@engine.reader
def flavor_count(context):
    return context.connection.execute(
        sa.select(sa.func.count()).select_from(_FLAVORS)).scalar()


@engine.writer
def flavor_create(context, values, extra_specs=None, projects=()):
    """A new flavor from column ``values``; FlavorExists / FlavorIdExists.

    Which unique constraint a duplicate broke is asked of the database,
    since backends name the failed columns each their own way.
    """
    connection = context.connection
    try:
        flavor_id = connection.execute(
            _FLAVORS.insert().values(**values)).inserted_primary_key[0]
    except db_exc.DBDuplicateEntry as exc:
        # oslo.db names the columns of the broken unique constraint.
        if 'flavorid' in (exc.columns or []):
            raise exception.FlavorIdExists(flavor_id=values['flavorid'])
        raise exception.FlavorExists(name=values['name'])
    for key, value in (extra_specs or {}).items():
        connection.execute(_SPECS.insert().values(
            flavor_id=flavor_id, key=key, value=value))
    for project_id in projects:
        connection.execute(_PROJECTS.insert().values(
            flavor_id=flavor_id, project_id=project_id))
    return _read_one(connection, context, values['flavorid'])


@engine.writer
def flavor_update_description(context, flavorid, description):
    connection = context.connection
    result = connection.execute(
        _FLAVORS.update().where(_FLAVORS.c.flavorid == flavorid)
        .values(description=description, updated_at=timeutils.utcnow()))
    if result.rowcount != 1:
        raise exception.FlavorNotFound(flavor_id=flavorid)
    return _read_one(connection, context, flavorid)


@engine.writer
def flavor_destroy(context, flavorid):
    """Delete the flavor with its extra specs and projects."""
    connection = context.connection
    row = connection.execute(
        sa.select(_FLAVORS.c.id)
        .where(_FLAVORS.c.flavorid == flavorid)).first()
    if row is None:
        raise exception.FlavorNotFound(flavor_id=flavorid)
    connection.execute(_SPECS.delete().where(_SPECS.c.flavor_id == row.id))
    connection.execute(
        _PROJECTS.delete().where(_PROJECTS.c.flavor_id == row.id))
    connection.execute(_FLAVORS.delete().where(_FLAVORS.c.id == row.id))


# Nova's attempts at writing extra specs that others write at once.
EXTRA_SPECS_RETRIES = 10


def flavor_extra_specs_update(context, flavorid, extra_specs):
    """Merge ``extra_specs`` into the flavor's; returns them all.

    A key another request inserted meanwhile is a duplicate: read again
    and update it, up to EXTRA_SPECS_RETRIES times, then
    FlavorExtraSpecUpdateCreateFailed (409), as Nova does.
    """
    for _ in range(EXTRA_SPECS_RETRIES):
        try:
            return _extra_specs_write(context, flavorid, extra_specs)
        except db_exc.DBDuplicateEntry:
            continue
    raise exception.FlavorExtraSpecUpdateCreateFailed(
        id=flavorid, retries=EXTRA_SPECS_RETRIES)


@engine.writer
def _extra_specs_write(context, flavorid, extra_specs):
    connection = context.connection
    flavor = _read_one(connection, context, flavorid)
    for key, value in extra_specs.items():
        if key in flavor.extra_specs:
            connection.execute(
                _SPECS.update().where(_SPECS.c.flavor_id == flavor.id,
                                      _SPECS.c.key == key)
                .values(value=value, updated_at=timeutils.utcnow()))
        else:
            connection.execute(_SPECS.insert().values(
                flavor_id=flavor.id, key=key, value=value))
    return dict(flavor.extra_specs, **extra_specs)


@engine.writer
def flavor_extra_specs_delete(context, flavorid, key):
    """Delete one extra spec; FlavorExtraSpecsNotFound when it has none."""
    connection = context.connection
    flavor = _read_one(connection, context, flavorid)
    result = connection.execute(
        _SPECS.delete().where(_SPECS.c.flavor_id == flavor.id,
                              _SPECS.c.key == key))
    if result.rowcount != 1:
        raise exception.FlavorExtraSpecsNotFound(flavor_id=flavorid,
                                                 extra_specs_key=key)


@engine.reader
def flavor_projects(context, flavorid):
    """The projects a private flavor is shared with, sorted."""
    return [project_id for project_id, in context.connection.execute(
        sa.select(_PROJECTS.c.project_id)
        .join(_FLAVORS, _FLAVORS.c.id == _PROJECTS.c.flavor_id)
        .where(_FLAVORS.c.flavorid == flavorid)
        .order_by(_PROJECTS.c.project_id))]


@engine.writer
def flavor_add_project(context, flavorid, project_id):
    """Share the flavor with ``project_id``; its projects, sorted.

    FlavorAccessExists when it is shared with that project already.
    """
    connection = context.connection
    flavor = _read_one(connection, context, flavorid)
    try:
        connection.execute(_PROJECTS.insert().values(
            flavor_id=flavor.id, project_id=project_id))
    except db_exc.DBDuplicateEntry:
        raise exception.FlavorAccessExists(flavor_id=flavorid,
                                           project_id=project_id)
    return flavor_projects(context, flavorid)


@engine.writer
def flavor_remove_project(context, flavorid, project_id):
    """Stop sharing the flavor with ``project_id``; its projects, sorted.

    FlavorAccessNotFound when it was not shared with that project.
    """
    connection = context.connection
    flavor = _read_one(connection, context, flavorid)
    result = connection.execute(_PROJECTS.delete().where(
        _PROJECTS.c.flavor_id == flavor.id,
        _PROJECTS.c.project_id == project_id))
    if result.rowcount != 1:
        raise exception.FlavorAccessNotFound(flavor_id=flavorid,
                                             project_id=project_id)
    return flavor_projects(context, flavorid)
