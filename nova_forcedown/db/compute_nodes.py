"""Query functions for compute nodes: their listing joined with their
service, one node, its statistics, create and update, and what a
placement reads (compute services with their nodes and usage) and claims.

Rows are read with SQLAlchemy Core: no ORM object per node.
"""

import collections

from oslo_utils import timeutils
import sqlalchemy as sa

from nova_forcedown.db import engine
from nova_forcedown.db import models
from nova_forcedown.db import services
from nova_forcedown import exception

_NODES = models.ComputeNode.__table__
_SERVICES = models.Service.__table__
_INSTANCES = models.Instance.__table__


@engine.writer
def compute_node_create(context, values):
    """Insert a node row; the row as stored (a :class:`NodeRow`)."""
    node_id = models.insert(context.connection, _NODES, values)
    return compute_node_get_by_uuid_or_id(context, node_id=node_id)


@engine.writer
def compute_node_update(context, node_id, values):
    values = dict(values, updated_at=timeutils.utcnow())
    result = context.connection.execute(
        sa.update(_NODES)
        .where(_NODES.c.id == node_id, _NODES.c.deleted == 0)
        .values(**values))
    if result.rowcount != 1:
        raise exception.ComputeNodeNotFound(id=node_id)
    return values


# The columns of a node row: the node's, then its service's. A summary
# reads the leading node columns only, which include what a summary view
# and its links need (id, uuid, host, hypervisor_hostname).
NODE_COLUMNS = tuple(models.ComputeNode.__table__.columns.keys())
NODE_SUMMARY_WIDTH = NODE_COLUMNS.index('hypervisor_hostname') + 1
SERVICE_COLUMNS = services.ServiceRow._fields
NodeRow = collections.namedtuple('NodeRow', NODE_COLUMNS)


def _nodes_with_service(node_columns, service_columns=SERVICE_COLUMNS):
    """The one join of live compute nodes with their live compute service.

    Selects ``node_columns`` then the service's ``service_columns`` (named
    ``service_<column>``). A node belongs to the nova-compute service of
    its service_id or, without one, of its host; nodes whose service is
    gone are left out, as Nova skips them. It is two LEFT JOINs, one per
    rule, keeping the nodes that found a service: every database then
    reads nodes in id order and looks each service up by an index, so a
    page reads its own rows (an OR in one join made SQLite and MariaDB
    join and sort every node before cutting the page).
    """
    node = models.ComputeNode.__table__
    by_id = _SERVICES.alias('service_by_id')
    by_host = _SERVICES.alias('service_by_host')
    joined = node.outerjoin(by_id, sa.and_(
        by_id.c.id == node.c.service_id, _is_live_compute(by_id))
    ).outerjoin(by_host, sa.and_(
        node.c.service_id.is_(None), by_host.c.host == node.c.host,
        _is_live_compute(by_host)))
    service = [
        sa.func.coalesce(by_id.c[name], by_host.c[name]).label(
            'service_' + name) for name in service_columns]
    return (sa.select(*node_columns, *service).select_from(joined)
            .where(node.c.deleted == 0,
                   sa.or_(by_id.c.id.is_not(None), by_host.c.id.is_not(None))))


def _is_live_compute(services):
    return sa.and_(services.c.deleted == 0,
                   services.c.binary == models.COMPUTE_BINARY)


def _page_nodes(query, limit, marker_id, hostname_pattern):
    """Nodes after ``marker_id`` in id order, at most ``limit``, by name.

    ``hostname_pattern`` is a substring: SQL LIKE wildcards in it are
    escaped, so ``_`` and ``%`` match only themselves.
    """
    node = models.ComputeNode.__table__
    if marker_id is not None:
        query = query.where(node.c.id > marker_id)
    if hostname_pattern is not None:
        query = query.where(node.c.hypervisor_hostname.contains(
            hostname_pattern, autoescape=True))
    query = query.order_by(node.c.id)
    if limit is not None:
        query = query.limit(limit)
    return query


def compute_node_list_rows(context, limit=None, marker_id=None,
                           hostname_pattern=None, summary=False):
    """Nodes with their service, in id order, paged or matched by name.

    Each row holds the values of :data:`NODE_COLUMNS` (or, for a summary,
    its first :data:`NODE_SUMMARY_WIDTH`) then of :data:`SERVICE_COLUMNS`,
    read with SQLAlchemy Core: no ORM objects, no per-row bookkeeping. One
    query.

    Runs in its caller's transaction (``engine.reading``, or any open
    one) and returns the rows as the cursor reads them: a listing that
    renders each as it comes never holds them all (at 100,000 hosts they
    are 100-170 MB of Python objects).
    """
    columns = list(models.ComputeNode.__table__.columns)
    if summary:
        columns = columns[:NODE_SUMMARY_WIDTH]
    query = _page_nodes(_nodes_with_service(columns), limit, marker_id,
                        hostname_pattern)
    return context.connection.execute(query)


@engine.reader
def compute_node_get_row(context, node_id=None, node_uuid=None):
    """One node with its service, a row as compute_node_list_rows reads."""
    node = models.ComputeNode.__table__
    query = _nodes_with_service(list(node.columns)).where(
        node.c.uuid == node_uuid if node_uuid is not None
        else node.c.id == node_id)
    row = context.connection.execute(query).first()
    if row is None:
        raise exception.ComputeNodeNotFound(
            id=node_uuid if node_uuid is not None else node_id)
    return row


@engine.reader
def compute_node_get_by_uuid_or_id(context, node_id=None, node_uuid=None):
    """A live node by id or uuid, with or without a service."""
    criteria = [_NODES.c.uuid == node_uuid if node_uuid is not None
                else _NODES.c.id == node_id]
    row = context.connection.execute(sa.select(_NODES).where(
        _NODES.c.deleted == 0, *criteria)).first()
    if row is None:
        raise exception.ComputeNodeNotFound(
            id=node_uuid if node_uuid is not None else node_id)
    return NodeRow._make(row)


@engine.reader
def compute_node_get_all_by_host(context, host):
    rows = context.connection.execute(
        sa.select(_NODES).where(_NODES.c.deleted == 0, _NODES.c.host == host)
        .order_by(_NODES.c.id))
    return [NodeRow._make(row) for row in rows]


_STATISTICS_COLUMNS = (
    'vcpus', 'memory_mb', 'local_gb', 'vcpus_used', 'memory_mb_used',
    'local_gb_used', 'free_ram_mb', 'free_disk_gb', 'current_workload',
    'running_vms', 'disk_available_least')


@engine.reader
def compute_node_statistics(context):
    """Sums over nodes whose nova-compute service is enabled."""
    node = models.ComputeNode.__table__
    nodes = _nodes_with_service(
        [node.c[column] for column in _STATISTICS_COLUMNS],
        ('disabled',)).subquery()
    sums = [sa.func.coalesce(sa.func.sum(nodes.c[column]), 0)
            for column in _STATISTICS_COLUMNS]
    query = sa.select(sa.func.count(), *sums).where(
        nodes.c.service_disabled == sa.false())
    row = context.connection.execute(query).one()
    return dict(zip(('count',) + _STATISTICS_COLUMNS,
                    (int(value) for value in row)))


# What a node whose driver runs no server writes as supported_instances.
NO_SERVERS = '[]'

# The columns of a compute node a placement needs.
NodeCapacity = collections.namedtuple('NodeCapacity', (
    'id', 'host', 'hypervisor_hostname', 'vcpus', 'memory_mb', 'local_gb'))

# A node's capacity and ``usage``: (vcpus, memory_mb, disk_gb) the live
# servers of its host take.
NodeWithUsage = collections.namedtuple('NodeWithUsage',
                                       NodeCapacity._fields + ('usage',))


def _runs_servers():
    """The node may run servers: it said so, or has not said yet."""
    return sa.or_(_NODES.c.supported_instances.is_(None),
                  _NODES.c.supported_instances != NO_SERVERS)


def _usage_by_host(hosts):
    """(host, vcpus, memory, disk) the live servers of each host take.

    Of the hosts bound to ``hosts`` (an expanding parameter), or of every
    host when it is None.
    """
    disk = (sa.func.coalesce(_INSTANCES.c.root_gb, 0) +
            sa.func.coalesce(_INSTANCES.c.ephemeral_gb, 0))
    query = (sa.select(_INSTANCES.c.host,
                       sa.func.sum(_INSTANCES.c.vcpus).label('vcpus'),
                       sa.func.sum(_INSTANCES.c.memory_mb).label('memory'),
                       sa.func.sum(disk).label('disk'))
             .where(_INSTANCES.c.deleted == 0))
    if hosts is not None:
        query = query.where(_INSTANCES.c.host.in_(hosts))
    return query.group_by(_INSTANCES.c.host).subquery()


def _compute_hosts_query(by_hosts):
    """Live compute services, each with its host's nodes and their usage.

    A service comes once per live node of its host that may run servers,
    or once with NULL node columns when it has none; in service id, then
    node id, order. ``by_hosts``: only the services of the hosts bound to
    ``hosts``.
    """
    hosts = sa.bindparam('hosts', expanding=True) if by_hosts else None
    usage = _usage_by_host(hosts)
    joined = _SERVICES.outerjoin(_NODES, sa.and_(
        _NODES.c.host == _SERVICES.c.host, _NODES.c.deleted == 0,
        _runs_servers())).outerjoin(usage, usage.c.host == _SERVICES.c.host)
    query = (sa.select(
        _SERVICES,
        *(_NODES.c[name].label('node_' + name)
          for name in NodeCapacity._fields),
        *(sa.func.coalesce(usage.c[name], 0)
          for name in ('vcpus', 'memory', 'disk')))
        .select_from(joined).where(_is_live_compute(_SERVICES)))
    if by_hosts:
        query = query.where(_SERVICES.c.host.in_(hosts))
    return query.order_by(_SERVICES.c.id, _NODES.c.id)


# Built once each: every evacuation runs one, and building costs more than
# running.
_COMPUTE_HOSTS = {by_hosts: _compute_hosts_query(by_hosts)
                  for by_hosts in (False, True)}


@engine.reader
def compute_hosts_with_usage(context, hosts=None):
    """The compute services of ``hosts`` with their nodes, one query.

    [(ServiceRow, NodeWithUsage or None)], as :func:`_compute_hosts_query`
    orders them; of every host when ``hosts`` is None.
    """
    if hosts is not None and not hosts:
        return []
    params = {} if hosts is None else {'hosts': sorted(set(hosts))}
    rows = context.connection.execute(_COMPUTE_HOSTS[hosts is not None],
                                      params)
    service_width = len(SERVICE_COLUMNS)
    node_width = len(NodeCapacity._fields)
    return [(services.ServiceRow._make(row[:service_width]),
             _node_with_usage(row[service_width:], node_width))
            for row in rows]


def _node_with_usage(values, width):
    if values[0] is None:
        return None
    return NodeWithUsage(*values[:width],
                         tuple(int(value) for value in values[width:]))


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


@engine.writer
def compute_node_claim_usage(context, node_id, host):
    """Lock node ``node_id``; what the servers of ``host`` take.

    (vcpus, memory_mb, disk_gb). Claims on one node then follow one
    another, and each sees the servers the one before it placed: the row
    stays locked until the transaction ends. Not on SQLite: the
    transaction already holds the database's write lock, and a statement
    less there is a turn of it held shorter.

    The usage is read as committed now, not as the transaction's first
    read saw it: MariaDB and MySQL read from a snapshot under REPEATABLE
    READ unless a read locks, so there it is a locking (shared) read;
    PostgreSQL reads what is committed at each statement, and refuses FOR
    SHARE with SUM.
    """
    connection = context.connection
    if connection.dialect.name != 'sqlite':
        connection.execute(_LOCK_NODE, {'node_id': node_id}).first()
    query = _HOST_USAGE
    if connection.dialect.name == 'mysql':
        query = _HOST_USAGE_SHARED
    row = connection.execute(query, {'host': host}).first()
    return tuple(int(value) for value in row)
