"""Query functions for services: read, list, heartbeat, create, delete.

Rows are read with SQLAlchemy Core as :class:`ServiceRow` named tuples.
"""

import collections
import functools

from oslo_db import exception as db_exc
from oslo_utils import timeutils
import sqlalchemy as sa

from nova_forcedown.db import engine
from nova_forcedown.db import models
from nova_forcedown.db import value_lists
from nova_forcedown.db import zones
from nova_forcedown import exception

COMPUTE_BINARY = models.COMPUTE_BINARY

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


@engine.writer
def service_create(context, values):
    """Insert a service row; the row as stored (a :class:`ServiceRow`)."""
    try:
        service_id = models.insert(context.connection, _SERVICES, values)
    except db_exc.DBDuplicateEntry:
        raise exception.ServiceExists(host=values.get('host'),
                                      binary=values.get('binary'))
    return _read_service(context, _SERVICE_BY_ID, id=service_id)


def _read_service(context, statement, **params):
    """One service as a :class:`ServiceRow`, or None.

    Core on a plain connection: for one row, an ORM session costs more
    than the query.
    """
    row = context.connection.execute(statement, params).first()
    return None if row is None else ServiceRow._make(row)


@engine.reader
def service_get(context, service_id):
    row = _read_service(context, _SERVICE_BY_ID, id=service_id)
    if row is None:
        raise exception.ServiceNotFound(service_id=service_id)
    return row


@engine.reader
def service_get_by_uuid(context, service_uuid):
    row = _read_service(context, _SERVICE_BY_UUID, uuid=service_uuid)
    if row is None:
        raise exception.ServiceNotFound(service_id=service_uuid)
    return row


@engine.reader
def service_get_by_host_and_binary(context, host, binary):
    row = _read_service(context, _SERVICE_BY_HOST_AND_BINARY, host=host,
                        binary=binary)
    if row is None:
        raise exception.HostBinaryNotFound(host=host, binary=binary)
    return row


@engine.reader
def service_host_exists(context, host):
    """Whether any live service runs on ``host`` (our "host mapping")."""
    query = sa.select(_SERVICES.c.id).where(
        _SERVICES.c.deleted == 0, _SERVICES.c.host == host).limit(1)
    return context.connection.execute(query).first() is not None


@engine.reader
def service_rpc_server(context, host):
    """The RPC server ``host``'s agent listens as; None when not recorded."""
    query = sa.select(_SERVICES.c.rpc_server).where(
        _SERVICES.c.deleted == 0, _SERVICES.c.host == host,
        _SERVICES.c.binary == COMPUTE_BINARY).limit(1)
    return context.connection.execute(query).scalar()


# A service as listings read it: a named tuple, whose fields read at C
# speed (a SQLAlchemy Row resolves each attribute name in Python).
ServiceRow = collections.namedtuple(
    'ServiceRow', tuple(models.Service.__table__.columns.keys()))


def _of_binaries(query, by_binary, exclude_binaries):
    """``query`` kept to ``:binary`` and without ``exclude_binaries``."""
    if by_binary:
        query = query.where(_SERVICES.c.binary == sa.bindparam('binary'))
    if exclude_binaries:
        query = query.where(
            value_lists.none_of(_SERVICES.c.binary, exclude_binaries))
    return query


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
        query = query.where(value_lists.in_values(_SERVICES.c.host, 'hosts'))
    query = _of_binaries(query, by_binary, exclude_binaries)
    return query.order_by(_SERVICES.c.id)


def service_list_rows(context, host=None, binary=None, exclude_binaries=(),
                      hosts=None):
    """Live services as read-only :class:`ServiceRow`, for listings.

    A row has every column as an attribute, as a Service object has its
    fields, but costs no ORM identity map and no field coercion: at ten
    thousand services that is most of a listing's time. One query.
    ``hosts``, when given, keeps the services of those hosts only (the
    compute services of a page of servers, for their host_status).

    Runs in its caller's transaction (``engine.reading``, or any open
    one) and returns an iterator that builds each row as the cursor
    reads it, so that a listing of thousands never holds them all.
    """
    query = _services_query(host is not None, hosts is not None,
                            binary is not None, tuple(exclude_binaries))
    params = {'host': host, 'binary': binary}
    if hosts is not None:
        params['hosts'] = sorted(set(hosts))
    return map(ServiceRow._make, context.connection.execute(query, params))


@functools.lru_cache(maxsize=None)
def _host_services_query(by_binary, exclude_binaries):
    """The live services of ``:host``, each beside a zone of that host.

    A row per service and zone aggregate of the host (zone NULL when it
    is in none), in the services' order; built once per filters.
    """
    zoned = zones.memberships(zones.HOST == sa.bindparam('host'),
                              hosts_named=True).subquery()
    query = (sa.select(_SERVICES, zoned.c.value)
             .select_from(_SERVICES.outerjoin(
                 zoned, zoned.c.host == _SERVICES.c.host))
             .where(_SERVICES.c.deleted == 0,
                    _SERVICES.c.host == sa.bindparam('host')))
    query = _of_binaries(query, by_binary, exclude_binaries)
    return query.order_by(_SERVICES.c.id, zoned.c.aggregate_id)


def host_service_rows(context, host, binary=None, exclude_binaries=()):
    """(``host``'s live services as ServiceRows, the zones it is in).

    What :func:`service_list_rows` and the host's zone memberships give,
    in one statement instead of two: a services listing of one host is
    what fence agents and monitors ask for most. Runs in its caller's
    transaction.
    """
    query = _host_services_query(binary is not None, tuple(exclude_binaries))
    services = {}
    zones_of_host = set()
    for *columns, zone in context.connection.execute(
            query, {'host': host, 'binary': binary}):
        row = ServiceRow._make(columns)
        services.setdefault(row.id, row)
        if zone is not None:
            zones_of_host.add(zone)
    return list(services.values()), zones_of_host


@engine.writer
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


@engine.writer(writes_first=True)
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


@engine.reader
def service_has_instances(context, host):
    instances = models.Instance.__table__
    query = sa.select(instances.c.id).where(
        instances.c.deleted == 0, instances.c.host == host).limit(1)
    return context.connection.execute(query).first() is not None


@engine.writer
def service_soft_delete(context, service):
    """Soft-delete ``service``; a compute's nodes too, and its memberships.

    Once deleted, its host is in no aggregate. ServiceNotFound when it
    was deleted already.
    """
    now = timeutils.utcnow()
    if service.binary == COMPUTE_BINARY:
        _destroy_nodes(context.connection, service, now)
        _leave_aggregates(context.connection, service.host)
    result = context.connection.execute(
        sa.update(_SERVICES)
        .where(_SERVICES.c.id == service.id, _SERVICES.c.deleted == 0)
        .values(deleted=_SERVICES.c.id, deleted_at=now))
    if result.rowcount != 1:
        raise exception.ServiceNotFound(service_id=service.id)


def _leave_aggregates(connection, host):
    hosts = models.AggregateHost.__table__
    connection.execute(hosts.delete().where(hosts.c.host == host))


def _destroy_nodes(connection, service, now):
    """Soft-delete the compute nodes of ``service`` (by id or by host)."""
    nodes = models.ComputeNode.__table__
    connection.execute(
        sa.update(nodes)
        .where(nodes.c.deleted == 0,
               sa.or_(nodes.c.service_id == service.id,
                      nodes.c.host == service.host))
        .values(deleted=nodes.c.id, deleted_at=now))


# ------------------------------------------------------- an admin's change

@engine.writer
def service_find_compute(context, uuid=None, host=None):
    """The live nova-compute service ``uuid`` or on ``host``, or None.

    Read, not locked: what a change locks first is decided from it.
    """
    row = context.connection.execute(
        _compute_query(uuid is not None, False, False),
        {'uuid': uuid, 'host': host}).first()
    return None if row is None else ServiceRow._make(row)


@engine.writer
def service_lock_compute(context, uuid=None, host=None, service_id=None):
    """The live nova-compute service ``uuid`` or on ``host``, locked.

    None when there is none (or, with ``service_id``, when that is not
    its id any more).
    """
    row = context.connection.execute(
        _compute_query(uuid is not None, service_id is not None, True),
        {'uuid': uuid, 'host': host, 'service_id': service_id}).first()
    return None if row is None else ServiceRow._make(row)


@functools.lru_cache(maxsize=None)
def _compute_query(by_uuid, by_id, locked):
    """The live compute service ``:uuid`` or on ``:host``.

    ``by_id``: and whose id is ``:service_id``. Built once per variant:
    each force-down reads its service so, and building the statement cost
    SQLAlchemy about 100 microseconds, more than SQLite's running it.
    """
    criteria = [_SERVICES.c.deleted == 0,
                _SERVICES.c.binary == COMPUTE_BINARY,
                _SERVICES.c.uuid == sa.bindparam('uuid') if by_uuid
                else _SERVICES.c.host == sa.bindparam('host')]
    if by_id:
        criteria.append(_SERVICES.c.id == sa.bindparam('service_id'))
    query = sa.select(_SERVICES).where(*criteria)
    return query.with_for_update() if locked else query


_TAKES_SERVERS = sa.select(_SERVICES.c.id).where(
    _SERVICES.c.deleted == 0, _SERVICES.c.binary == COMPUTE_BINARY,
    _SERVICES.c.host == sa.bindparam('host'),
    _SERVICES.c.disabled == sa.false(),
    _SERVICES.c.forced_down == sa.false())


@engine.writer
def service_takes_servers(context, host):
    """Whether ``host``'s compute service is enabled and not forced down.

    Read in the transaction that places a server there, share-locked
    until it ends (SQLite's write lock covers it already): a force-down
    or a disable committed after the scheduler read the host waits for
    this transaction, or this one sees it.
    """
    connection = context.connection
    query = _TAKES_SERVERS
    if connection.dialect.name != 'sqlite':
        query = query.with_for_update(read=True)
    return connection.execute(query, {'host': host}).first() is not None


@engine.writer
def service_write_admin(context, old, values):
    """Write an admin's ``values`` to the locked row ``old``; the row now."""
    connection = context.connection
    now = _stored_now(connection)
    connection.execute(_UPDATE_SERVICE,
                       dict(values, service_id=old.id, updated_at=now))
    return old._replace(updated_at=now, **values)


# An UPDATE of service ``:service_id``, built once; what it sets is the
# other parameters.
_UPDATE_SERVICE = _SERVICES.update().where(
    _SERVICES.c.id == sa.bindparam('service_id'))


def _stored_now(connection):
    """Now, as the database stores it: the row returned is the row read.

    MariaDB's DATETIME columns keep whole seconds.
    """
    now = timeutils.utcnow()
    if connection.dialect.name == 'mysql':
        now = now.replace(microsecond=0)
    return now
