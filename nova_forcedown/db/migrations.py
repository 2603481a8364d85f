"""Query functions for migrations (evacuations here) and host claims.

An evacuation is accepted in the transaction of its instance action
(:func:`nova_forcedown.db.instances.instance_act`): the destination's
node is claimed there (:func:`claim`) and the migration row inserted
(:func:`migration_create`). The agents then move it through Nova's
statuses. Rows are read as named tuples.
"""

import collections

from oslo_utils import timeutils
from oslo_utils import uuidutils
import sqlalchemy as sa

from nova_forcedown.db import engine
from nova_forcedown.db import models
from nova_forcedown import exception

_MIGRATIONS = models.Migration.__table__
_INSTANCES = models.Instance.__table__
_NODES = models.ComputeNode.__table__

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

# Filters matched exactly, by column.
EXACT_FILTERS = ('instance_uuid', 'source_compute', 'status',
                 'migration_type', 'user_id', 'project_id')


def migration_create(connection, context, values, now):
    """Insert a migration of ``context``'s request; it as a row."""
    values = dict(values, uuid=uuidutils.generate_uuid(),
                  user_id=context.user_id, project_id=context.project_id,
                  hidden=False, created_at=now, deleted=0)
    result = connection.execute(_MIGRATIONS.insert(), values)
    values['id'] = result.inserted_primary_key[0]
    return MigrationRow(**{name: values.get(name)
                           for name in MigrationRow._fields})


# Built once, as every evacuation runs them.
_HOST_USAGE = sa.select(
    sa.func.coalesce(sa.func.sum(_INSTANCES.c.vcpus), 0),
    sa.func.coalesce(sa.func.sum(_INSTANCES.c.memory_mb), 0),
    sa.func.coalesce(sa.func.sum(
        sa.func.coalesce(_INSTANCES.c.root_gb, 0) +
        sa.func.coalesce(_INSTANCES.c.ephemeral_gb, 0)), 0)).where(
    _INSTANCES.c.host == sa.bindparam('host'), _INSTANCES.c.deleted == 0)
_HOST_USAGE_SHARED = _HOST_USAGE.with_for_update(read=True)
_LOCK_NODE = sa.select(_NODES.c.id).where(
    _NODES.c.id == sa.bindparam('node_id')).with_for_update()


def host_usage(connection, host):
    """(vcpus, memory_mb, disk_gb) the live servers of ``host`` take.

    Read as committed now, not as the transaction's first read saw it:
    MariaDB and MySQL read from a snapshot under REPEATABLE READ unless a
    read locks, so there it is a locking (shared) read; PostgreSQL reads
    what is committed at each statement, and refuses FOR SHARE with SUM.
    """
    query = _HOST_USAGE
    if connection.dialect.name == 'mysql':
        query = _HOST_USAGE_SHARED
    row = connection.execute(query, {'host': host}).first()
    return tuple(int(value) for value in row)


def lock_node(connection, node_id):
    """Lock a compute node's row until the transaction ends.

    Claims on one node then follow one another, and each sees the servers
    the one before it placed. Not on SQLite: the transaction already holds
    the database's write lock, and a statement less there is a turn of
    the write lock held shorter.
    """
    if connection.dialect.name != 'sqlite':
        connection.execute(_LOCK_NODE, {'node_id': node_id}).first()


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


def migration_fail_open(connection, instance_uuid):
    """Fail the server's evacuations not yet rebuilt; the rows as they were.

    In the caller's transaction. A retried evacuation supersedes them:
    their destination never finished, and its rebuild, if it ever
    resumes, finds them failed.
    """
    rows = [MigrationRow._make(row) for row in connection.execute(
        sa.select(_MIGRATIONS).where(
            _MIGRATIONS.c.instance_uuid == instance_uuid,
            _MIGRATIONS.c.migration_type == EVACUATION,
            _MIGRATIONS.c.status.in_(TRANSITIONS[FAILED]),
            _MIGRATIONS.c.deleted == 0).order_by(_MIGRATIONS.c.id))]
    for row in rows:
        _moved(connection, row.id, FAILED)
    return rows


# The columns of a compute node a placement needs.
NodeCapacity = collections.namedtuple('NodeCapacity', (
    'id', 'host', 'hypervisor_hostname', 'vcpus', 'memory_mb', 'local_gb'))


@engine.reader
def node_capacities(context, hosts):
    """The live compute nodes of ``hosts``, with their capacity."""
    if not hosts:
        return []
    return [NodeCapacity._make(row) for row in context.connection.execute(
        sa.select(*(_NODES.c[name] for name in NodeCapacity._fields))
        .where(_NODES.c.host.in_(list(hosts)), _NODES.c.deleted == 0)
        .order_by(_NODES.c.id))]


# A node's capacity and ``usage``: (vcpus, memory_mb, disk_gb) the live
# servers of its host take.
NodeWithUsage = collections.namedtuple('NodeWithUsage',
                                       NodeCapacity._fields + ('usage',))


def _nodes_with_usage_query():
    """The live nodes of the hosts ``:hosts``, with their hosts' usage."""
    hosts = sa.bindparam('hosts', expanding=True)
    disk = (sa.func.coalesce(_INSTANCES.c.root_gb, 0) +
            sa.func.coalesce(_INSTANCES.c.ephemeral_gb, 0))
    usage = (sa.select(_INSTANCES.c.host,
                       sa.func.sum(_INSTANCES.c.vcpus).label('vcpus'),
                       sa.func.sum(_INSTANCES.c.memory_mb).label('memory'),
                       sa.func.sum(disk).label('disk'))
             .where(_INSTANCES.c.host.in_(hosts), _INSTANCES.c.deleted == 0)
             .group_by(_INSTANCES.c.host).subquery())
    return (sa.select(*(_NODES.c[name] for name in NodeCapacity._fields),
                      *(sa.func.coalesce(usage.c[name], 0)
                        for name in ('vcpus', 'memory', 'disk')))
            .select_from(_NODES.outerjoin(usage,
                                          usage.c.host == _NODES.c.host))
            .where(_NODES.c.host.in_(hosts), _NODES.c.deleted == 0)
            .order_by(_NODES.c.id))


# Built once: an evacuation runs it, and building costs more than running.
_NODES_WITH_USAGE = _nodes_with_usage_query()


@engine.reader
def nodes_with_usage(context, hosts):
    """The live compute nodes of ``hosts`` as NodeWithUsage, one query."""
    if not hosts:
        return []
    capacity = len(NodeCapacity._fields)
    return [NodeWithUsage(*row[:capacity],
                          tuple(int(value) for value in row[capacity:]))
            for row in context.connection.execute(
                _NODES_WITH_USAGE, {'hosts': sorted(set(hosts))})]


@engine.reader
def evacuated_counts(context, hosts):
    """{host: servers that left it by evacuation}.

    Whatever their status but ``error`` (the server never left), each
    server once: a failed rebuild left it on its destination, and a
    retried evacuation leaves from the first source again.
    """
    if not hosts:
        return {}
    rows = context.connection.execute(
        sa.select(_MIGRATIONS.c.source_compute,
                  sa.func.count(sa.distinct(_MIGRATIONS.c.instance_uuid)))
        .where(_MIGRATIONS.c.migration_type == EVACUATION,
               _MIGRATIONS.c.source_compute.in_(list(hosts)),
               _MIGRATIONS.c.status != ERROR,
               _MIGRATIONS.c.deleted == 0)
        .group_by(_MIGRATIONS.c.source_compute))
    return {host: count for host, count in rows}
