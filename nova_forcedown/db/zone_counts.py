"""The compute hosts of the zones a change moves, locked and counted.

What the fence-storm guard (:mod:`nova_forcedown.objects.fence_storm`)
judges: for each zone a change of zones moves (a force-down, a host added
to or removed from an aggregate that has a zone, an aggregate's zone set,
changed or unset, a compute service deleted), how many of its compute
hosts are forced down, of how many, before and after the change.

A zone's compute hosts are the live nova-compute services whose hosts
are in an aggregate with that ``availability_zone``, and, for the default
zone, those in no such aggregate; a host in several zones counts in each.

Two changes of one zone take turns: the change's transaction locks the
compute services of every zone it changes (before or after) with one
``SELECT ... FOR UPDATE`` in id order, and counts them locked. A change
of membership writes its aggregate rows first and locks the services
after, as every guarded change takes aggregate rows before services. The
zones' members are read as committed, not as the transaction's first
read saw them: SQLite's write lock, taken first, makes every other writer
wait; MariaDB reads the aggregate rows with shared locks, which wait for
a membership change in progress and read what it committed; a PostgreSQL
statement that waited for a lock still sees the other tables as they
were when it began, so there the zones and their members' ids are read
again (and the members locked again) until nothing changed: the rows
then locked are the zones' members, and any change of them waits for
this transaction. The lock reads a service's id, host and forced_down
only: a zone can have thousands.
"""

import collections
import functools

import sqlalchemy as sa

from nova_forcedown.db import engine
from nova_forcedown.db import models
from nova_forcedown.db import zones

_SERVICES = models.Service.__table__


class Delta(collections.namedtuple(
        'Delta', ('joined', 'left', 'forced_down', 'deleted'),
        defaults=((), (), None, None))):
    """What a change does to zones.

    ``joined`` and ``left``: the :class:`Membership` rows it adds and
    removes, written already in the transaction; ``forced_down``: the host
    it forces down, ``deleted``: the host whose compute service it deletes,
    both written after the check.
    """

    @property
    def hosts(self):
        hosts = {membership.host for membership in self.joined + self.left}
        hosts.update(host for host in (self.forced_down, self.deleted)
                     if host is not None)
        return sorted(hosts)

    def before(self, host, now):
        """The (aggregate id, zone) pairs of ``host`` before, from ``now``."""
        return (now.difference(_pairs(self.joined, host))
                .union(_pairs(self.left, host)))


def _pairs(memberships, host):
    return {(membership.aggregate_id, membership.zone)
            for membership in memberships if membership.host == host}


class ZoneCount(collections.namedtuple('ZoneCount',
                                       ('zone', 'forced', 'total'))):

    def __str__(self):
        return '%d of %d compute hosts of zone %s' % (
            self.forced, self.total, self.zone)


@engine.writer
def lock_and_count(context, default_zone, delta):
    """([(before, after)], rows locked) of the zones ``delta`` changes.

    Each pair is the :class:`ZoneCount` of one zone, by name, before and
    after the change. The rows are the compute services of those zones,
    locked: {service id: (id, host, forced_down)}; no more is read of
    them, as a zone can have thousands. ``default_zone`` is where a host
    in no zone is.
    """
    connection = context.connection
    zones, rows, placed = _lock_zones(connection, default_zone, delta)
    return _counts(zones, rows, placed, delta, default_zone), rows


def _lock_zones(connection, default_zone, delta):
    """(zones, rows locked, placed) once the rows are the zones' members.

    ``placed`` is {host: {(aggregate id, zone)}} of the hosts locked, or
    None when every row locked is in the one zone, before and after.
    """
    hosts = delta.hosts
    zones = _zones_changed(delta, _memberships(connection, hosts),
                           default_zone)
    if not zones:
        return zones, {}, {}
    rows = _lock_members(connection, zones, default_zone)
    placed = None
    if connection.dialect.name == 'postgresql':
        zones, rows, placed = _locked_until_unchanged(
            connection, default_zone, delta, zones, rows)
    elif _counted_by_host(zones, delta):
        placed = _memberships(connection, hosts, zones)
    return zones, rows, placed if _counted_by_host(zones, delta) else None


def _locked_until_unchanged(connection, default_zone, delta, zones, rows):
    """PostgreSQL: the zones and their members read again, once locked.

    A new statement sees what committed while the lock waited: the zones
    of ``delta``'s hosts, then the ids of the zones' members. Until they
    are what was locked, the members are locked again.
    """
    while True:
        placed = _memberships(
            connection, delta.hosts,
            zones if _counted_by_host(zones, delta) else ())
        again = _zones_changed(delta, placed, default_zone)
        if again == zones and rows.keys() == _member_ids(
                connection, zones, default_zone):
            return zones, rows, placed
        zones = again
        rows = _lock_members(connection, zones, default_zone)


def _counted_by_host(zones, delta):
    """Whether counting ``zones`` needs each host's memberships."""
    return len(zones) != 1 or bool(delta.joined or delta.left)


def _names(pairs, default_zone):
    return frozenset(zone for _, zone in pairs) or frozenset([default_zone])


def _zones_changed(delta, placed, default_zone):
    """The zones a host of ``delta`` leaves or joins, or is in.

    A host forced down or deleted changes the zones it is in.
    """
    zones = set()
    for host in delta.hosts:
        now = placed.get(host, frozenset())
        after = _names(now, default_zone)
        zones.update(after.symmetric_difference(
            _names(delta.before(host, now), default_zone)))
        if host in (delta.forced_down, delta.deleted):
            zones.update(after)
    return frozenset(zones)


def _counts(zones, rows, placed, delta, default_zone):
    """[(before, after)]: the ZoneCounts of each of ``zones``, by name.

    The rows are counted as they are now, in one pass; then the hosts of
    ``delta``, the only ones that differ before or after, are taken out
    and counted as they were and as they will be. Now is after for the
    memberships (written) and before for a force-down or a deletion.
    """
    now = _tally(rows.values(), zones, placed, default_zone)
    before, after = collections.Counter(now), collections.Counter(now)
    changed = set(delta.hosts)
    for row in rows.values():
        if row.host not in changed:
            continue
        if placed is None:
            was = is_now = zones
        else:
            pairs = placed.get(row.host, frozenset())
            is_now = _names(pairs, default_zone) & zones
            was = _names(delta.before(row.host, pairs), default_zone) & zones
        _add(before, is_now, row.forced_down, -1)
        _add(before, was, row.forced_down, 1)
        _add(after, is_now, row.forced_down, -1)
        if row.host != delta.deleted:
            _add(after, is_now,
                 row.forced_down or row.host == delta.forced_down, 1)
    return [tuple(ZoneCount(zone, side['forced', zone], side['total', zone])
                  for side in (before, after))
            for zone in sorted(zones)]


def _tally(rows, zones, placed, default_zone):
    """Counter of ('forced' | 'total', zone) of ``rows`` as they are."""
    tally = collections.Counter()
    if placed is None:
        zone, = zones
        tally['total', zone] = len(rows)
        tally['forced', zone] = sum(bool(row.forced_down) for row in rows)
        return tally
    # Hosts of one aggregate share their memberships: count each kind once.
    kinds = collections.Counter(
        (placed.get(row.host, frozenset()), bool(row.forced_down))
        for row in rows)
    for (pairs, forced_down), count in kinds.items():
        _add(tally, _names(pairs, default_zone) & zones, forced_down, count)
    return tally


def _add(tally, zones, forced_down, hosts):
    """Count ``hosts`` (a number; negative takes them out) in ``zones``."""
    for zone in zones:
        tally['total', zone] += hosts
        tally['forced', zone] += hosts * bool(forced_down)


def _shared(connection):
    """Whether reads of aggregate rows lock them (see the module's doc)."""
    return connection.dialect.name == 'mysql'


def _memberships(connection, hosts, zones=()):
    """{host: {(aggregate id, zone)}}, as committed.

    Of ``hosts`` and of the hosts in ``zones``.
    """
    params = {'hosts': list(hosts)}
    if zones:
        params['zones'] = sorted(zones)
    placed = collections.defaultdict(set)
    for host, aggregate_id, zone in connection.execute(
            _memberships_query(bool(zones), _shared(connection)), params):
        placed[host].add((aggregate_id, zone))
    return {host: frozenset(pairs) for host, pairs in placed.items()}


def _lock_members(connection, zones, default_zone):
    """{id: row} of the live compute services of ``zones``, locked."""
    query = _members_query(default_zone in zones, _shared(connection), True)
    return {row.id: row for row in connection.execute(
        query, {'zones': sorted(zones)})}


def _member_ids(connection, zones, default_zone):
    """The ids of the live compute services of ``zones``, not locked."""
    query = _members_query(default_zone in zones, False, False)
    return set(connection.execute(query, {'zones': sorted(zones)}).scalars())


def _zone_hosts(shared, *criteria):
    query = zones.zoned_hosts(*criteria)
    return query.with_for_update(read=True) if shared else query


def _in_bound_zones():
    return zones.ZONE.in_(sa.bindparam('zones', expanding=True))


@functools.lru_cache(maxsize=None)
def _memberships_query(by_zones, shared):
    """Built once per shape; ``hosts`` and ``zones`` are bound at each run."""
    in_hosts = zones.HOST.in_(sa.bindparam('hosts', expanding=True))
    query = zones.memberships(
        sa.or_(in_hosts, zones.HOST.in_(
            _zone_hosts(shared, _in_bound_zones())))
        if by_zones else in_hosts)
    return query.with_for_update(read=True) if shared else query


@functools.lru_cache(maxsize=None)
def _members_query(with_default, shared, locked):
    """Built once per shape; ``zones`` is bound at each run.

    A host is in a zone when one of its aggregates has that zone, and in
    the default zone (``with_default``) too when it is in none. ``locked``:
    the rows, locked in id order; else their ids.
    """
    either = [_SERVICES.c.host.in_(_zone_hosts(shared, _in_bound_zones()))]
    if with_default:
        either.append(_SERVICES.c.host.not_in(_zone_hosts(shared)))
    columns = ((_SERVICES.c.id, _SERVICES.c.host, _SERVICES.c.forced_down)
               if locked else (_SERVICES.c.id,))
    query = sa.select(*columns).where(
        _SERVICES.c.deleted == 0,
        _SERVICES.c.binary == models.COMPUTE_BINARY,
        sa.or_(*either))
    if locked:
        query = query.order_by(_SERVICES.c.id).with_for_update()
    return query
