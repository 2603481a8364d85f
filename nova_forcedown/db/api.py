"""Query functions over one oslo.db transaction context.

Every function takes the request context first and runs inside a reader or
writer transaction of :data:`context_manager`. Writes that must touch exactly
one row check the row count. Listings are one query, never one per row.
"""

import collections
import functools
import os
import sqlite3
import threading
import weakref

from oslo_db import api as oslo_db_api
from oslo_db import exception as db_exc
from oslo_db.sqlalchemy import enginefacade
from oslo_utils import timeutils
import sqlalchemy as sa

from nova_forcedown.db import models
from nova_forcedown.db import sqlite_writers
from nova_forcedown import exception

context_manager = enginefacade.transaction_context()

# How long an SQLite connection waits for another writer's lock before it
# gives up with "database is locked", unless the URL sets ``timeout``.
SQLITE_BUSY_TIMEOUT_MS = 10000

# Retry deadlocks and lost connections a few times before failing a request.
retry_on_deadlock = oslo_db_api.wrap_db_retry(
    max_retries=5, retry_on_deadlock=True, retry_interval=0.05,
    inc_retry_interval=True, max_retry_interval=0.5)

COMPUTE_BINARY = 'nova-compute'

# What a lost or unreachable database looks like to its callers (the API,
# the heartbeat loop, the agent): oslo.db's wrapped errors (a refused or
# dropped connection, a deadlock still failing after its retries) and what
# oslo.db passes through unwrapped (the pool's checkout timeout, a
# driver-level OperationalError or InterfaceError on a dead connection).
# All are transient: try again later.
OUTAGES = (db_exc.DBConnectionError, db_exc.DBDeadlock,
           sa.exc.OperationalError, sa.exc.InterfaceError,
           sa.exc.DisconnectionError, sa.exc.TimeoutError)


def is_outage(exc):
    """Whether ``exc`` means the database cannot be used just now.

    A plain oslo.db DBError counts when the driver error it wraps does.
    """
    if isinstance(exc, OUTAGES):
        return True
    inner = getattr(exc, 'inner_exception', None)
    return (isinstance(exc, db_exc.DBError) and inner is not None and
            inner is not exc and isinstance(inner, OUTAGES))


# Changes no row (its WHERE is false) but takes SQLite's write lock.
_TAKE_WRITE_LOCK = sa.text('UPDATE services SET id = id WHERE 0 = 1')


def write_first(connection):
    """On SQLite, make the transaction a writer before it reads.

    In WAL mode a transaction that read before another writer committed
    can no longer write: it fails at once with "database is locked",
    whatever the busy timeout (a plain BEGIN takes no lock). An UPDATE
    that changes nothing takes the write lock, waiting for it as any write
    does, and every read after it sees the latest rows. Other backends
    need nothing: their writes wait for row locks.

    Such writers first wait their turn in a queue of the file's
    (:mod:`nova_forcedown.db.sqlite_writers`), fairer than SQLite's own
    waiting.
    """
    if connection.dialect.name != 'sqlite':
        return
    sqlite_writers.take_turn(connection)
    connection.execute(_TAKE_WRITE_LOCK)


def write_transaction(function):
    """``context_manager.writer.connection`` that writes before it reads.

    For a write function that reads first (see :func:`write_first`).
    """
    @functools.wraps(function)
    def first_take_the_write_lock(context, *args, **kwargs):
        write_first(context.connection)
        return function(context, *args, **kwargs)

    return context_manager.writer.connection(first_take_the_write_lock)


# Largest value of an integer primary key on every supported database.
MAX_INTEGER_ID = 2 ** 31 - 1


# Nobody (API request or heartbeat) may wait long for a database server
# that has gone away: the pool gives up a checkout after POOL_TIMEOUT
# seconds and the driver a connection attempt after CONNECT_TIMEOUT (a lost
# network otherwise waits for the kernel's TCP timeout, minutes). Values
# set in the configuration file win. SQLite has neither.
POOL_TIMEOUT = 10
CONNECT_TIMEOUT = 5

# Backends of a database server, whose drivers take ``connect_timeout`` as
# a URL parameter.
_SERVER_BACKENDS = ('postgresql', 'mysql')


def configure(conf, manager=None):
    """Point the transaction context (or ``manager``) at ``conf.database``.

    The directory of an SQLite file is created when missing, so the default
    database under ``state_path`` works on a fresh machine.
    """
    _server_timeouts(conf)
    settings = _database_settings(conf)
    _ensure_sqlite_directory(settings.get('connection'))
    (manager or context_manager).configure(**settings)


def _server_timeouts(conf):
    url = sa.engine.make_url(conf.database.connection)
    if url.get_backend_name() not in _SERVER_BACKENDS:
        return
    conf.set_default('pool_timeout', POOL_TIMEOUT, group='database')
    parameters = []
    if 'connect_timeout' not in url.query:
        parameters.append('connect_timeout=%d' % CONNECT_TIMEOUT)
    # oslo.db would connect to MySQL with 3-byte utf8: a 4-byte character
    # (an emoji in a disabled reason) would then fail there alone.
    if url.get_backend_name() == 'mysql' and 'charset' not in url.query:
        parameters.append('charset=utf8mb4')
    if parameters:
        conf.set_default('connection_parameters', '&'.join(parameters),
                         group='database')


def _ensure_sqlite_directory(url):
    if not url:
        return
    url = sa.engine.make_url(url)
    if url.get_backend_name() == 'sqlite' and url.database not in (
            None, '', ':memory:'):
        directory = os.path.dirname(os.path.abspath(url.database))
        try:
            os.makedirs(directory, exist_ok=True)
        except OSError as exc:
            raise exception.DatabaseUnavailable(
                reason='cannot create the directory %s of the SQLite '
                       'database: %s' % (directory, exc.strerror or exc))


def _database_settings(conf):
    settings = dict(conf.database.items())
    settings.pop('sync_on_startup', None)
    # The option names of oslo.db that enginefacade does not know.
    for key in ('backend', 'use_db_reconnect', 'db_retry_interval',
                'db_inc_retry_interval', 'db_max_retry_interval',
                'db_max_retries', 'use_tpool'):
        settings.pop(key, None)
    # oslo.db sleeps on every connection check-in to let eventlet switch
    # green threads; this project runs on native threads, where that sleep
    # is only a system call per transaction.
    settings['thread_checkin'] = False
    return settings


def get_engine():
    return context_manager.writer.get_engine()


def _setup_sqlite(engine):
    """Let concurrent SQLite writers wait their turn instead of failing.

    WAL journal mode lets readers go on while one writer writes, and the
    busy timeout makes a writer wait for the lock rather than fail at once
    with "database is locked" (a ``timeout`` in the URL, in seconds, wins).
    Every other backend is left alone.

    Both cost no statement per connection (a file's engine opens one per
    transaction): the timeout is an argument of the connection, and the
    journal mode, kept in the file, is set by the engine's first one.
    """
    if engine.dialect.name != 'sqlite':
        return
    if engine.url.database in (None, '', ':memory:'):
        return
    in_wal_mode = threading.Event()

    @sa.event.listens_for(engine, 'do_connect')
    def _busy_timeout(dialect, connection_record, cargs, cparams):
        cparams.setdefault('timeout', SQLITE_BUSY_TIMEOUT_MS / 1000.0)

    @sa.event.listens_for(engine, 'connect')
    def _wal_mode(dbapi_connection, connection_record):
        if not in_wal_mode.is_set():
            dbapi_connection.execute('PRAGMA journal_mode = WAL').close()
            in_wal_mode.set()

    sqlite_writers.attach(engine, float(engine.url.query.get(
        'timeout', SQLITE_BUSY_TIMEOUT_MS / 1000.0)))
    _keep_open(engine)


def _keep_open(engine):
    """Hold one connection to ``engine``'s file open while it lives.

    oslo.db gives SQLite files no pool, so each transaction opens and
    closes a connection; when it was the only one, SQLite checkpoints the
    write-ahead log and deletes it as it closes, an fsync and more at the
    end of most transactions of a quiet process. A connection left open,
    idle, outside any transaction, prevents that; the log is then
    checkpointed as it grows.
    """
    keeper = sqlite3.connect(engine.url.database, check_same_thread=False)
    weakref.finalize(engine, keeper.close)


# Engines this context manager creates (not the test fixtures' own).
context_manager.append_on_engine_create(_setup_sqlite)


def _not_deleted(model):
    return model.deleted == 0


# ---------------------------------------------------------------- services

@context_manager.writer
def service_create(context, values):
    service = models.Service()
    service.update(values)
    try:
        service.save(context.session)
    except db_exc.DBDuplicateEntry:
        raise exception.ServiceExists(host=values.get('host'),
                                      binary=values.get('binary'))
    return service


_SERVICES = models.Service.__table__


def _service_lookup(*criteria):
    """A statement reading one live service row, built once at import."""
    return sa.select(_SERVICES).where(
        _SERVICES.c.deleted == 0, *criteria).limit(1)


_SERVICE_BY_ID = _service_lookup(_SERVICES.c.id == sa.bindparam('id'))
_SERVICE_BY_UUID = _service_lookup(_SERVICES.c.uuid == sa.bindparam('uuid'))
_SERVICE_BY_HOST_AND_BINARY = _service_lookup(
    _SERVICES.c.host == sa.bindparam('host'),
    _SERVICES.c.binary == sa.bindparam('binary'))


def _read_service(context, statement, **params):
    """One service as a :class:`ServiceRow`, or None.

    Core on a plain connection: for one row, an ORM session costs more
    than the query.
    """
    row = context.connection.execute(statement, params).first()
    return None if row is None else ServiceRow._make(row)


@context_manager.reader.connection
def service_get(context, service_id):
    row = _read_service(context, _SERVICE_BY_ID, id=service_id)
    if row is None:
        raise exception.ServiceNotFound(service_id=service_id)
    return row


@context_manager.reader.connection
def service_get_by_uuid(context, service_uuid):
    row = _read_service(context, _SERVICE_BY_UUID, uuid=service_uuid)
    if row is None:
        raise exception.ServiceNotFound(service_id=service_uuid)
    return row


@context_manager.reader.connection
def service_get_by_host_and_binary(context, host, binary):
    row = _read_service(context, _SERVICE_BY_HOST_AND_BINARY, host=host,
                        binary=binary)
    if row is None:
        raise exception.HostBinaryNotFound(host=host, binary=binary)
    return row


@context_manager.reader
def service_host_exists(context, host):
    """Whether any live service runs on ``host`` (our "host mapping")."""
    query = sa.select(models.Service.id).where(
        _not_deleted(models.Service), models.Service.host == host).limit(1)
    return context.session.execute(query).first() is not None


# A service as listings read it: a named tuple, whose fields read at C
# speed (a SQLAlchemy Row resolves each attribute name in Python).
ServiceRow = collections.namedtuple(
    'ServiceRow', tuple(models.Service.__table__.columns.keys()))


@functools.lru_cache(maxsize=None)
def _services_query(by_host, by_hosts, by_binary, exclude_binaries):
    """The listing's statement for this set of filters, built once.

    Their values are bound at each run (``host``, ``hosts``, ``binary``):
    building a statement costs more than running it on a small table.
    """
    query = sa.select(_SERVICES).where(_SERVICES.c.deleted == 0)
    if by_host:
        query = query.where(_SERVICES.c.host == sa.bindparam('host'))
    if by_hosts:
        query = query.where(_SERVICES.c.host.in_(
            sa.bindparam('hosts', expanding=True)))
    if by_binary:
        query = query.where(_SERVICES.c.binary == sa.bindparam('binary'))
    if exclude_binaries:
        query = query.where(_SERVICES.c.binary.not_in(exclude_binaries))
    return query.order_by(_SERVICES.c.id)


@context_manager.reader
def service_list_rows(context, host=None, binary=None, exclude_binaries=(),
                      hosts=None, consume=list):
    """Live services as read-only :class:`ServiceRow`, for listings.

    A row has every column as an attribute, as a Service object has its
    fields, but costs no ORM identity map and no field coercion: at ten
    thousand services that is most of a listing's time. One query.
    ``hosts``, when given, keeps the services of those hosts only (the
    compute services of a page of servers, for their host_status).
    Returns ``consume(rows)``, called in the reading transaction with an
    iterator that builds each row as the cursor reads it (see
    :func:`compute_node_list_rows`).
    """
    query = _services_query(host is not None, hosts is not None,
                            binary is not None, tuple(exclude_binaries))
    params = {'host': host, 'binary': binary}
    if hosts is not None:
        params['hosts'] = sorted(set(hosts))
    return consume(map(ServiceRow._make,
                       context.session.connection().execute(query, params)))


@retry_on_deadlock
@context_manager.writer.connection
def service_update(context, service_id, values):
    """Write ``values`` to one live service row in one UPDATE.

    A new report_count is a heartbeat, so last_seen_up moves with it, as in
    Nova. Returns the values written, ``updated_at`` included.
    """
    now = timeutils.utcnow()
    values = dict(values, updated_at=now)
    if 'report_count' in values and 'last_seen_up' not in values:
        values['last_seen_up'] = now
    # Core on a plain connection, not the ORM: there is no object to
    # synchronize, and a session costs a write more than its round trip.
    result = context.connection.execute(
        sa.update(_SERVICES)
        .where(_SERVICES.c.id == service_id, _SERVICES.c.deleted == 0)
        .values(**values))
    if result.rowcount != 1:
        raise exception.ServiceNotFound(service_id=service_id)
    return values


# Ids per heartbeat UPDATE: well under every backend's limit of bound
# parameters (SQLite's is 32766), and a short lock on each chunk of rows.
HEARTBEAT_CHUNK = 500

_HEARTBEAT_IDS = sa.bindparam('ids', expanding=True)
_HEARTBEAT_RETURNS = (_SERVICES.c.id, _SERVICES.c.report_count,
                      _SERVICES.c.forced_down, _SERVICES.c.disabled)
# Built once: a heartbeat is the most frequent write there is, and building
# the statement costs a sender more than executing it.
_HEARTBEAT_UPDATE = (
    sa.update(_SERVICES)
    .where(_SERVICES.c.id.in_(_HEARTBEAT_IDS), _SERVICES.c.deleted == 0)
    .values(report_count=_SERVICES.c.report_count + 1,
            last_seen_up=sa.bindparam('now'),
            updated_at=sa.bindparam('now')))
_HEARTBEAT_UPDATE_RETURNING = _HEARTBEAT_UPDATE.returning(*_HEARTBEAT_RETURNS)
_HEARTBEAT_READ_BACK = sa.select(*_HEARTBEAT_RETURNS).where(
    _SERVICES.c.id.in_(_HEARTBEAT_IDS), _SERVICES.c.deleted == 0)


@retry_on_deadlock
@context_manager.writer.connection
def service_report_states(context, service_ids):
    """Record a heartbeat of each service: report_count and last_seen_up.

    One UPDATE per HEARTBEAT_CHUNK services, in one transaction, so an
    agent of many hosts costs the database a statement per chunk rather
    than per host. The increment happens in SQL, so concurrent heartbeats
    and admin writes never undo each other.

    Returns ``{id: values}`` with the heartbeat values and the admin flags
    as now stored, so the caller learns of a force-down; the id of a row
    that is gone (deleted) is missing from it.
    """
    now = timeutils.utcnow()
    ids = sorted(set(service_ids))    # one lock order: no deadlocks
    stored = {}
    for first in range(0, len(ids), HEARTBEAT_CHUNK):
        chunk = ids[first:first + HEARTBEAT_CHUNK]
        for row in _report_chunk(context.connection, chunk, now):
            stored[row[0]] = {
                'report_count': row[1], 'forced_down': bool(row[2]),
                'disabled': bool(row[3]), 'last_seen_up': now,
                'updated_at': now}
    return stored


def _report_chunk(connection, ids, now):
    if connection.dialect.update_returning:
        return connection.execute(_HEARTBEAT_UPDATE_RETURNING,
                                  {'ids': ids, 'now': now}).all()
    # MySQL/MariaDB: read back the rows this transaction has just locked.
    connection.execute(_HEARTBEAT_UPDATE, {'ids': ids, 'now': now})
    return connection.execute(_HEARTBEAT_READ_BACK, {'ids': ids}).all()


def service_report_state(context, service_id):
    """Heartbeat of one service; raises ServiceNotFound when it is gone."""
    stored = service_report_states(context, [service_id])
    if service_id not in stored:
        raise exception.ServiceNotFound(service_id=service_id)
    return stored[service_id]


@context_manager.reader
def service_has_instances(context, host):
    query = sa.select(models.Instance.id).where(
        _not_deleted(models.Instance), models.Instance.host == host).limit(1)
    return context.session.execute(query).first() is not None


@retry_on_deadlock
@context_manager.writer
def service_destroy(context, service_id):
    """Soft-delete a service and, for a compute, its compute nodes.

    Refuses (409) to delete a compute service whose host has instances.
    """
    write_first(context.session.connection())
    service = service_get(context, service_id)
    now = timeutils.utcnow()
    if service.binary == COMPUTE_BINARY:
        if service_has_instances(context, service.host):
            raise exception.ServiceHostsInstances()
        context.session.execute(
            sa.update(models.ComputeNode)
            .where(_not_deleted(models.ComputeNode),
                   sa.or_(models.ComputeNode.service_id == service.id,
                          models.ComputeNode.host == service.host))
            .values(deleted=models.ComputeNode.id, deleted_at=now))
    result = context.session.execute(
        sa.update(models.Service)
        .where(models.Service.id == service.id, _not_deleted(models.Service))
        .values(deleted=models.Service.id, deleted_at=now))
    if result.rowcount != 1:
        raise exception.ServiceNotFound(service_id=service_id)


# ----------------------------------------------------------- compute nodes

@context_manager.writer
def compute_node_create(context, values):
    node = models.ComputeNode()
    node.update(values)
    node.save(context.session)
    return node


@retry_on_deadlock
@context_manager.writer
def compute_node_update(context, node_id, values):
    values = dict(values, updated_at=timeutils.utcnow())
    result = context.session.execute(
        sa.update(models.ComputeNode)
        .where(models.ComputeNode.id == node_id,
               _not_deleted(models.ComputeNode))
        .values(**values))
    if result.rowcount != 1:
        raise exception.ComputeNodeNotFound(id=node_id)
    return values


# The columns of a node row: the node's, then its service's. A summary
# reads the leading node columns only, which include what a summary view
# and its links need (id, uuid, host, hypervisor_hostname).
NODE_COLUMNS = tuple(models.ComputeNode.__table__.columns.keys())
NODE_SUMMARY_WIDTH = NODE_COLUMNS.index('hypervisor_hostname') + 1
SERVICE_COLUMNS = ServiceRow._fields


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
                   services.c.binary == COMPUTE_BINARY)


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


@context_manager.reader
def compute_node_list_rows(context, limit=None, marker_id=None,
                           hostname_pattern=None, summary=False,
                           make=tuple, consume=list):
    """Nodes with their service, in id order, paged or matched by name.

    Each row holds the values of :data:`NODE_COLUMNS` (or, for a summary,
    its first :data:`NODE_SUMMARY_WIDTH`) then of :data:`SERVICE_COLUMNS`,
    read with SQLAlchemy Core: no ORM objects, no per-row bookkeeping. One
    query. ``make(row)`` builds each item as the row is read, so a large
    listing never holds its rows and its items at once.

    Returns ``consume(items)``, called inside the reading transaction with
    an iterator over the items as the cursor reads them: the default,
    ``list``, holds them all; a listing that renders them as they come
    never does (at 100,000 hosts they are 100-170 MB of Python objects).
    """
    columns = list(models.ComputeNode.__table__.columns)
    if summary:
        columns = columns[:NODE_SUMMARY_WIDTH]
    query = _page_nodes(_nodes_with_service(columns), limit, marker_id,
                        hostname_pattern)
    return consume(map(make, context.session.connection().execute(query)))


@context_manager.reader
def compute_node_get_row(context, node_id=None, node_uuid=None, make=tuple):
    """One node with its service, a row as compute_node_list_rows reads."""
    node = models.ComputeNode.__table__
    query = _nodes_with_service(list(node.columns)).where(
        node.c.uuid == node_uuid if node_uuid is not None
        else node.c.id == node_id)
    row = context.session.connection().execute(query).first()
    if row is None:
        raise exception.ComputeNodeNotFound(
            id=node_uuid if node_uuid is not None else node_id)
    return make(row)


@context_manager.reader
def compute_node_get_by_uuid_or_id(context, node_id=None, node_uuid=None):
    """A live node by id or uuid, with or without a service."""
    query = sa.select(models.ComputeNode).where(
        _not_deleted(models.ComputeNode))
    if node_uuid is not None:
        query = query.where(models.ComputeNode.uuid == node_uuid)
    else:
        query = query.where(models.ComputeNode.id == node_id)
    row = context.session.scalars(query).first()
    if row is None:
        raise exception.ComputeNodeNotFound(
            id=node_uuid if node_uuid is not None else node_id)
    return row


@context_manager.reader
def compute_node_get_all_by_host(context, host):
    query = sa.select(models.ComputeNode).where(
        _not_deleted(models.ComputeNode), models.ComputeNode.host == host)
    return context.session.scalars(
        query.order_by(models.ComputeNode.id)).all()


_STATISTICS_COLUMNS = (
    'vcpus', 'memory_mb', 'local_gb', 'vcpus_used', 'memory_mb_used',
    'local_gb_used', 'free_ram_mb', 'free_disk_gb', 'current_workload',
    'running_vms', 'disk_available_least')


@context_manager.reader
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
    row = context.session.connection().execute(query).one()
    return dict(zip(('count',) + _STATISTICS_COLUMNS,
                    (int(value) for value in row)))


# -------------------------------------------------------------- instances

@context_manager.writer
def instance_create(context, values):
    instance = models.Instance()
    instance.update(values)
    instance.save(context.session)
    return instance


@context_manager.reader
def instance_get_all_by_hosts(context, hosts):
    """Live instances on any of ``hosts``, in one query."""
    if not hosts:
        return []
    query = sa.select(models.Instance).where(
        _not_deleted(models.Instance),
        models.Instance.host.in_(sorted(set(hosts))))
    return context.session.scalars(query.order_by(models.Instance.id)).all()
