"""Query functions for host aggregates, their hosts and their metadata.

The same transaction context as :mod:`nova_forcedown.db.engine`. An aggregate
is read with its hosts and metadata; a listing of any number of them is
three statements. Aggregate rows are deleted, not soft-deleted, as in
Nova's API database.

A change of the hosts or the zone of an aggregate that has (or gets) a
zone is judged by the fence-storm guard when it is given a ``limit`` (a
:class:`fence_storm.FencingLimit`): in its transaction, the aggregate's
row is locked, the change written, then the compute services of the
zones it changes locked and counted, and the change refused
(ZoneChangeLimitExceeded, nothing committed) when it breaks the rule.
Without a limit it costs nothing more.
"""

import collections
import functools

from oslo_db import exception as db_exc
from oslo_utils import timeutils
from oslo_utils import uuidutils
import sqlalchemy as sa

from nova_forcedown.db import engine
from nova_forcedown.db import fence_storm
from nova_forcedown.db import models
from nova_forcedown.db import zones
from nova_forcedown import exception

AZ_KEY = models.AZ_KEY

_AGGREGATES = models.Aggregate.__table__
_HOSTS = models.AggregateHost.__table__
_METADATA = models.AggregateMetadata.__table__

AggregateRow = collections.namedtuple(
    'AggregateRow', ('id', 'uuid', 'name', 'created_at', 'updated_at',
                     'hosts', 'metadata'))


def _read(connection, *criteria):
    """Aggregates matching ``criteria``, in id order, in three statements."""
    ids = sa.select(_AGGREGATES.c.id).where(*criteria)
    aggregates = connection.execute(
        sa.select(_AGGREGATES).where(*criteria).order_by(_AGGREGATES.c.id))
    hosts = collections.defaultdict(list)
    for aggregate_id, host in connection.execute(
            sa.select(_HOSTS.c.aggregate_id, _HOSTS.c.host)
            .where(_HOSTS.c.aggregate_id.in_(ids)).order_by(_HOSTS.c.id)):
        hosts[aggregate_id].append(host)
    metadata = collections.defaultdict(dict)
    for aggregate_id, key, value in connection.execute(
            sa.select(_METADATA.c.aggregate_id, _METADATA.c.key,
                      _METADATA.c.value)
            .where(_METADATA.c.aggregate_id.in_(ids))):
        metadata[aggregate_id][key] = value
    return [AggregateRow(row.id, row.uuid, row.name, row.created_at,
                         row.updated_at, hosts[row.id], metadata[row.id])
            for row in aggregates]


def _read_one(connection, aggregate_id, lock=False):
    """The aggregate; with ``lock``, its row locked first.

    Its guarded changes then take turns, each reading what the one before
    it wrote.
    """
    if lock:
        connection.execute(sa.select(_AGGREGATES.c.id).where(
            _AGGREGATES.c.id == aggregate_id).with_for_update()).first()
    rows = _read(connection, _AGGREGATES.c.id == aggregate_id)
    if not rows:
        raise exception.AggregateNotFound(aggregate_id=aggregate_id)
    return rows[0]


@engine.reader
def aggregate_get_all(context):
    return _read(context.connection)


@engine.reader
def aggregate_get(context, aggregate_id):
    return _read_one(context.connection, aggregate_id)


@engine.reader
def aggregate_get_by_host(context, host):
    """The aggregates that hold ``host``."""
    return _read(context.connection, _AGGREGATES.c.id.in_(
        sa.select(_HOSTS.c.aggregate_id).where(_HOSTS.c.host == host)))


@engine.reader
def aggregate_get_by_zone(context, zone):
    """The aggregates whose metadata makes them the zone ``zone``."""
    return _read(context.connection, _AGGREGATES.c.id.in_(
        sa.select(_METADATA.c.aggregate_id).where(_METADATA.c.key == AZ_KEY,
                                                  _METADATA.c.value == zone)))


@engine.reader
def zone_memberships(context, hosts=None, zone=None, consume=list):
    """Each host in an aggregate with a zone, with that aggregate and zone.

    Of every host, or only of ``hosts``, or only of the hosts that are in
    ``zone`` (with their other zones too). One statement. Returns
    ``consume(memberships)``, given an iterator over them as the cursor
    reads them, in the reading transaction.
    """
    query = _zone_memberships_query(hosts is not None, zone is not None)
    params = {'zone': zone}
    if hosts is not None:
        params['hosts'] = sorted(set(hosts))
    return consume(map(zones.Membership._make,
                       context.connection.execute(query, params)))


@functools.lru_cache(maxsize=None)
def _zone_memberships_query(by_hosts, by_zone):
    """The statement of :func:`zone_memberships`, built once per filters.

    The values are bound at each run (``hosts``, ``zone``): an evacuation
    in a named zone runs it, and building it costs more than running it.
    """
    query = zones.memberships().order_by(_HOSTS.c.aggregate_id,
                                         _HOSTS.c.host)
    if by_hosts:
        query = query.where(zones.HOST.in_(
            sa.bindparam('hosts', expanding=True)))
    if by_zone:
        in_zone = zones.zoned_hosts(zones.ZONE == sa.bindparam('zone'))
        query = query.where(zones.HOST.in_(in_zone))
    return query


@engine.writer
def aggregate_create(context, name, metadata=None, uuid=None):
    """A new aggregate; AggregateNameExists when the name is taken.

    With ``uuid``, the uuid its caller already announced.
    """
    connection = context.connection
    try:
        aggregate_id = connection.execute(_AGGREGATES.insert().values(
            uuid=uuid or uuidutils.generate_uuid(), name=name)
        ).inserted_primary_key[0]
    except db_exc.DBDuplicateEntry:
        raise exception.AggregateNameExists(aggregate_name=name)
    _write_metadata(connection, aggregate_id, metadata or {})
    return _read_one(connection, aggregate_id)


@engine.writer
def aggregate_update(context, aggregate_id, name=None, metadata=None,
                     limit=None):
    """Rename and/or merge ``metadata`` (a None value deletes its key).

    ``updated_at`` moves whatever changes, as a PUT of the aggregate says
    it was modified. The UPDATE locks the aggregate's row.
    """
    connection = context.connection
    metadata = metadata or {}
    values = {'updated_at': timeutils.utcnow()}
    if name is not None:
        values['name'] = name
    try:
        result = connection.execute(
            _AGGREGATES.update().where(_AGGREGATES.c.id == aggregate_id)
            .values(**values))
    except db_exc.DBDuplicateEntry:
        raise exception.AggregateNameExists(aggregate_name=name)
    if result.rowcount != 1:
        raise exception.AggregateNotFound(aggregate_id=aggregate_id)
    guarded = limit is not None and AZ_KEY in metadata
    before = _read_one(connection, aggregate_id) if guarded else None
    _write_metadata(connection, aggregate_id, metadata)
    if guarded:
        _refuse_zone_change(connection, limit, before, metadata[AZ_KEY])
    return _read_one(connection, aggregate_id)


@engine.writer
def aggregate_metadata_update(context, aggregate_id, metadata, limit=None):
    """Merge ``metadata`` into the aggregate's; a None value deletes."""
    connection = context.connection
    guarded = limit is not None and AZ_KEY in metadata
    before = _read_one(connection, aggregate_id, lock=guarded)
    _write_metadata(connection, aggregate_id, metadata)
    if guarded:
        _refuse_zone_change(connection, limit, before, metadata[AZ_KEY])
    return _read_one(connection, aggregate_id)


def _write_metadata(connection, aggregate_id, metadata):
    if not metadata:
        return
    connection.execute(_METADATA.delete().where(
        _METADATA.c.aggregate_id == aggregate_id,
        _METADATA.c.key.in_(sorted(metadata))))
    kept = [{'aggregate_id': aggregate_id, 'key': key, 'value': value}
            for key, value in sorted(metadata.items()) if value is not None]
    if kept:
        connection.execute(_METADATA.insert(), kept)


@engine.writer
def aggregate_delete(context, aggregate_id, refuse_hosts):
    """Delete an aggregate and its metadata.

    ``refuse_hosts(row)`` is the error to raise when it still holds hosts.
    """
    connection = context.connection
    aggregate = _read_one(connection, aggregate_id)
    if aggregate.hosts:
        raise refuse_hosts(aggregate)
    connection.execute(_METADATA.delete().where(
        _METADATA.c.aggregate_id == aggregate_id))
    connection.execute(_AGGREGATES.delete().where(
        _AGGREGATES.c.id == aggregate_id))


@engine.writer
def aggregate_host_add(context, aggregate_id, host, limit=None):
    connection = context.connection
    before = _read_one(connection, aggregate_id, lock=limit is not None)
    try:
        connection.execute(_HOSTS.insert().values(aggregate_id=aggregate_id,
                                                  host=host))
    except db_exc.DBDuplicateEntry:
        raise exception.AggregateHostExists(aggregate_id=aggregate_id,
                                            host=host)
    if limit is not None:
        _refuse_fence_storm(
            connection, limit,
            'Adding host %s to aggregate %s' % (host, aggregate_id),
            joined=_memberships(before, [host], _zone(before)))
    return _read_one(connection, aggregate_id)


@engine.writer
def aggregate_host_delete(context, aggregate_id, host, limit=None):
    connection = context.connection
    before = (_read_one(connection, aggregate_id, lock=True)
              if limit is not None else None)
    result = connection.execute(_HOSTS.delete().where(
        _HOSTS.c.aggregate_id == aggregate_id, _HOSTS.c.host == host))
    if result.rowcount != 1:
        raise exception.AggregateHostNotFound(aggregate_id=aggregate_id,
                                              host=host)
    if limit is not None:
        _refuse_fence_storm(
            connection, limit,
            'Removing host %s from aggregate %s' % (host, aggregate_id),
            left=_memberships(before, [host], _zone(before)))
    return _read_one(connection, aggregate_id)


# ------------------------------------------------- the fence-storm guard

def _zone(aggregate):
    return aggregate.metadata.get(AZ_KEY)


def _memberships(aggregate, hosts, zone):
    """What ``hosts`` in ``aggregate`` are to zones when it has ``zone``."""
    if zone is None:
        return ()
    return tuple(zones.Membership(host, aggregate.id, zone)
                 for host in hosts)


def _refuse_zone_change(connection, limit, before, zone):
    """The guard on ``before`` (the aggregate as it was) now in ``zone``."""
    old = _zone(before)
    if zone == old:
        return
    change = ('Removing availability zone %s from aggregate %s'
              % (old, before.id) if zone is None else
              'Setting availability zone %s on aggregate %s'
              % (zone, before.id))
    _refuse_fence_storm(connection, limit, change,
                        joined=_memberships(before, before.hosts, zone),
                        left=_memberships(before, before.hosts, old))


def _refuse_fence_storm(connection, limit, change, joined=(), left=()):
    """ZoneChangeLimitExceeded if ``joined`` and ``left`` break the rule.

    They are the memberships the change added and removed, written
    already; without any, no zone changes and nothing is read.
    """
    if joined or left:
        fence_storm.lock_checked(
            connection, limit, fence_storm.Delta(joined=joined, left=left),
            functools.partial(exception.ZoneChangeLimitExceeded,
                              change=change))
