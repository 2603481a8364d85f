"""Query functions for host aggregates, their hosts and their metadata.

The same transaction context as :mod:`nova_forcedown.db.engine`. An aggregate
is read with its hosts and metadata; a listing of any number of them is
three statements. Aggregate rows are deleted, not soft-deleted, as in
Nova's API database.

Each write is one step of an operation of
:mod:`nova_forcedown.objects.aggregate`, which owns the transaction: the
zone rules and the fence-storm guard are judged there, between these
steps.
"""

import collections
import functools

from oslo_db import exception as db_exc
from oslo_utils import timeutils
from oslo_utils import uuidutils
import sqlalchemy as sa

from nova_forcedown.db import engine
from nova_forcedown.db import models
from nova_forcedown.db import value_lists
from nova_forcedown.db import zones
from nova_forcedown import exception

AZ_KEY = models.AZ_KEY

_AGGREGATES = models.Aggregate.__table__
_HOSTS = models.AggregateHost.__table__
_METADATA = models.AggregateMetadata.__table__


class AggregateRow(collections.namedtuple(
        'AggregateRow', ('id', 'uuid', 'name', 'created_at', 'updated_at',
                         'hosts', 'metadata', 'availability_zone'))):
    """An aggregate with its hosts and metadata.

    ``availability_zone``: the zone its metadata makes it, or None.
    """

    __slots__ = ()


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
                         row.updated_at, hosts[row.id], metadata[row.id],
                         metadata[row.id].get(AZ_KEY))
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
def zone_memberships(context, hosts=None, zone=None):
    """Each host in an aggregate with a zone, with that aggregate and zone.

    Of every host, or only of ``hosts``, or only of the hosts that are in
    ``zone`` (with their other zones too). One statement; a list.
    """
    return list(zone_memberships_as_read(context, hosts, zone))


def zone_memberships_as_read(context, hosts=None, zone=None):
    """What :func:`zone_memberships` returns, as the cursor reads it.

    Runs in its caller's transaction (``engine.reading``, or any open
    one) and returns an iterator: the memberships of every host are
    never all held at once.
    """
    query = _zone_memberships_query(hosts is not None, zone is not None)
    params = {'zone': zone}
    if hosts is not None:
        params['hosts'] = sorted(set(hosts))
    return map(zones.Membership._make,
               context.connection.execute(query, params))


@functools.lru_cache(maxsize=None)
def _zone_memberships_query(by_hosts, by_zone):
    """The statement of :func:`zone_memberships`, built once per filters.

    The values are bound at each run (``hosts``, ``zone``): an evacuation
    in a named zone runs it, and building it costs more than running it.
    """
    query = zones.memberships(hosts_named=by_hosts).order_by(
        _HOSTS.c.aggregate_id, _HOSTS.c.host)
    if by_hosts:
        query = query.where(value_lists.in_values(zones.HOST, 'hosts'))
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
def aggregate_get_locked(context, aggregate_id):
    """The aggregate, its row locked first.

    Its guarded changes then take turns, each reading what the one before
    it wrote.
    """
    return _read_one(context.connection, aggregate_id, lock=True)


@engine.writer
def aggregate_update(context, aggregate_id, name=None):
    """Rename the aggregate (with ``name``), and move its ``updated_at``.

    ``updated_at`` moves whatever changes, as a PUT of the aggregate says
    it was modified. The UPDATE locks the aggregate's row.
    """
    values = {'updated_at': timeutils.utcnow()}
    if name is not None:
        values['name'] = name
    try:
        result = context.connection.execute(
            _AGGREGATES.update().where(_AGGREGATES.c.id == aggregate_id)
            .values(**values))
    except db_exc.DBDuplicateEntry:
        raise exception.AggregateNameExists(aggregate_name=name)
    if result.rowcount != 1:
        raise exception.AggregateNotFound(aggregate_id=aggregate_id)


@engine.writer
def aggregate_metadata_write(context, aggregate_id, metadata):
    """Merge ``metadata`` into the aggregate's; a None value deletes."""
    _write_metadata(context.connection, aggregate_id, metadata)


def _write_metadata(connection, aggregate_id, metadata):
    if not metadata:
        return
    # Without case, as MariaDB and MySQL compare keys: a key replaces the
    # one stored in another case on every backend.
    connection.execute(_METADATA.delete().where(
        _METADATA.c.aggregate_id == aggregate_id,
        sa.func.lower(_METADATA.c.key).in_(
            sorted({key.lower() for key in metadata}))))
    kept = [{'aggregate_id': aggregate_id, 'key': key, 'value': value}
            for key, value in sorted(metadata.items()) if value is not None]
    if kept:
        connection.execute(_METADATA.insert(), kept)


@engine.writer
def aggregate_delete(context, aggregate_id):
    """Delete an aggregate and its metadata (its hosts are the caller's)."""
    connection = context.connection
    connection.execute(_METADATA.delete().where(
        _METADATA.c.aggregate_id == aggregate_id))
    connection.execute(_AGGREGATES.delete().where(
        _AGGREGATES.c.id == aggregate_id))


@engine.writer
def aggregate_host_add(context, aggregate_id, host):
    """Put ``host`` in the aggregate; AggregateHostExists if it is in it."""
    try:
        context.connection.execute(_HOSTS.insert().values(
            aggregate_id=aggregate_id, host=host))
    except db_exc.DBDuplicateEntry:
        raise exception.AggregateHostExists(aggregate_id=aggregate_id,
                                            host=host)


@engine.writer
def aggregate_host_delete(context, aggregate_id, host):
    """Take ``host`` out of the aggregate; AggregateHostNotFound if not in."""
    result = context.connection.execute(_HOSTS.delete().where(
        _HOSTS.c.aggregate_id == aggregate_id, _HOSTS.c.host == host))
    if result.rowcount != 1:
        raise exception.AggregateHostNotFound(aggregate_id=aggregate_id,
                                              host=host)
