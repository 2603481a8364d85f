"""Aggregates: named groups of hosts with metadata; a zone when the metadata
holds ``availability_zone``, as in Nova.

An aggregate is read as a record (``AggregateRow``, with its hosts and
metadata); nothing here is versioned, as no aggregate travels between
processes (its notifications build their own payloads).

The zone rules live here, so every caller (the API, the agent, the manage
command) keeps them: a host is in at most one zone, a zone never has an
empty name, and a host's zone does not change under its instances. Given
a ``conf`` whose ``[fencing] max_forced_down_fraction`` is set, a change
of a zone's hosts is also judged by the fence-storm guard
(:mod:`nova_forcedown.objects.fence_storm`): ZoneChangeLimitExceeded.
Each change is one transaction, a function of this module: the
aggregate's row locked when the guard judges it, the change written, then
the compute services of the zones it moves locked, counted and judged.

Each change is notified as Nova notifies it, ``aggregate.<action>.start``
before it is tried and ``.end`` once it is committed: a change refused by
the rules or the database may leave a start without an end, as in Nova.
"""

import functools

from oslo_utils import uuidutils

from nova_forcedown.db import aggregates as db_aggregates
from nova_forcedown.db import engine as db_engine
from nova_forcedown.db import models
from nova_forcedown.db import services as db_services
from nova_forcedown.db import zones as db_zones
from nova_forcedown import exception
from nova_forcedown import notifications
from nova_forcedown.objects import fence_storm
from nova_forcedown.objects import host_zones
from nova_forcedown.objects import instance as instance_obj

AZ_KEY = db_aggregates.AZ_KEY
AggregateRow = db_aggregates.AggregateRow

_INSTANCES_WOULD_CHANGE_ZONE = (
    "The host cannot be %(action)s the aggregate as the availability zone of "
    "the host would change from '%(old)s' to '%(new)s' but the host already "
    "has %(count)d instance(s). Changing the AZ of an existing instance is "
    "not supported by this action. Move the instances away from this host "
    "then try again. If you need to move the instances between AZs then you "
    "can use shelve_offload and unshelve to achieve this.")


def get_by_id(context, aggregate_id):
    """The AggregateRow; AggregateNotFound when there is none."""
    return db_aggregates.aggregate_get(context, aggregate_id)


def get_all(context):
    """Every aggregate with its hosts and metadata, in id order."""
    return db_aggregates.aggregate_get_all(context)


def get_by_host(context, host):
    return db_aggregates.aggregate_get_by_host(context, host)


def create(context, name, availability_zone=None):
    """A new aggregate; its zone, if any, is its metadata.

    Its uuid is chosen first, so that aggregate.create.start names it;
    that start has no id and no hosts yet.
    """
    metadata = ({AZ_KEY: availability_zone}
                if availability_zone is not None else None)
    unsaved = AggregateRow(None, uuidutils.generate_uuid(), name, None, None,
                           None, metadata, availability_zone)
    _notify(context, unsaved, 'create', 'start')
    aggregate = db_aggregates.aggregate_create(context, name, metadata,
                                               uuid=unsaved.uuid)
    _notify(context, aggregate, 'create', 'end')
    return aggregate


def update(context, aggregate, name=None, conf=None, **zone):
    """Rename and/or (with ``availability_zone=``) change the zone.

    Checked before anything is written, then one transaction. Nova
    notifies a rename as ``update_prop`` and a zone as
    ``update_metadata``; both starts show the new name, as Nova's rename
    comes first. Returns the aggregate as now stored.
    """
    metadata = {AZ_KEY: zone[AZ_KEY]} if AZ_KEY in zone else {}
    _check_zone_change(context, aggregate, metadata,
                       exception.CannotUpdateAggregate)
    actions = ((['update_prop'] if name is not None else []) +
               (['update_metadata'] if metadata else []))
    renamed = aggregate if name is None else aggregate._replace(name=name)
    for action in actions:
        _notify(context, renamed, action, 'start')
    after = write_update(context, aggregate.id, name=name, metadata=metadata,
                         limit=fence_storm.FencingLimit.from_conf(conf))
    for action in actions:
        _notify(context, after, action, 'end')
    return after


def set_metadata(context, aggregate, metadata, conf=None):
    """Merge ``metadata`` (a None deletes its key); the aggregate now.

    Keys are compared without case, on every backend as MariaDB and
    MySQL compare them (:func:`_keys_without_case`).
    """
    metadata = _keys_without_case(aggregate, metadata)
    _check_zone_change(context, aggregate, metadata,
                       exception.CannotUpdateAggregateMetadata)
    _notify(context, aggregate, 'update_metadata', 'start')
    after = write_metadata(context, aggregate.id, metadata,
                           limit=fence_storm.FencingLimit.from_conf(conf))
    _notify(context, after, 'update_metadata', 'end')
    return after


def destroy(context, aggregate):
    _notify(context, aggregate, 'delete', 'start')
    write_delete(context, aggregate.id)
    _notify(context, aggregate, 'delete', 'end')


def _notify(context, aggregate, action, phase):
    notifications.aggregate_changed(context, aggregate, action, phase)


def add_host_to(context, aggregate_id, host, conf=None):
    """Add the compute ``host``; checks in Nova's order.

    ComputeHostNotFound, AggregateNotFound, CannotAddAggregateHost
    (zone rules), then AggregateHostExists; then the fence-storm guard.
    Returns the aggregate as now stored.
    """
    _require_compute(context, host)
    aggregate = get_by_id(context, aggregate_id)
    _notify(context, aggregate, 'add_host', 'start')
    fail = exception.CannotAddAggregateHost
    zone = aggregate.availability_zone
    if zone is not None:
        memberships = db_aggregates.zone_memberships(context, [host])
        _check_one_zone(aggregate, memberships, zone, fail)
        _check_instances_keep_zone(
            context, host, 'added to', old=host_zones.zone_of(memberships),
            new=zone, fail=fail, aggregate_id=aggregate_id)
    aggregate = write_host_add(context, aggregate_id, host,
                               limit=fence_storm.FencingLimit.from_conf(conf))
    _notify(context, aggregate, 'add_host', 'end')
    return aggregate


def remove_host_from(context, aggregate_id, host, conf=None):
    """Remove ``host`` from the aggregate ``aggregate_id``.

    ComputeHostNotFound, AggregateNotFound or AggregateHostNotFound when
    there is nothing to remove; CannotRemoveAggregateHost when its
    instances would change zone; then the fence-storm guard. Returns the
    aggregate as now stored.
    """
    _require_compute(context, host)
    aggregate = get_by_id(context, aggregate_id)
    _notify(context, aggregate, 'remove_host', 'start')
    if host not in aggregate.hosts:
        raise exception.AggregateHostNotFound(aggregate_id=aggregate_id,
                                              host=host)
    if aggregate.availability_zone is not None:
        memberships = db_aggregates.zone_memberships(context, [host])
        remaining = [membership for membership in memberships
                     if membership.aggregate_id != aggregate_id]
        _check_instances_keep_zone(
            context, host, 'removed from', old=host_zones.zone_of(memberships),
            new=host_zones.zone_of(remaining),
            fail=exception.CannotRemoveAggregateHost,
            aggregate_id=aggregate_id)
    aggregate = write_host_remove(
        context, aggregate_id, host,
        limit=fence_storm.FencingLimit.from_conf(conf))
    _notify(context, aggregate, 'remove_host', 'end')
    return aggregate


def place_hosts_in_zone(context, hosts, zone):
    """Put each of ``hosts`` in ``zone``, as an agent registers them.

    A host already in the zone is left alone. The others join the first
    aggregate of the zone, made (named after the zone) when there is
    none, under the rules of add_host_to but not the fence-storm guard:
    the zone an agent is configured with is where its hosts are, and
    refusing it would leave them in another.
    """
    placed = {membership.host for membership in
              db_aggregates.zone_memberships(context, hosts)
              if membership.zone == zone}
    missing = [host for host in hosts if host not in placed]
    if not missing:
        return
    aggregate_id = _zone_aggregate_id(context, zone)
    for host in missing:
        add_host_to(context, aggregate_id, host)


def _zone_aggregate_id(context, zone):
    """The first aggregate of ``zone``, made when there is none.

    Agents started together with a new zone may all find none: the one
    whose aggregate is made second joins the first's (its name is taken
    once the first's transaction committed).
    """
    for last_try in (False, True):
        aggregates = db_aggregates.aggregate_get_by_zone(context, zone)
        if aggregates:
            return aggregates[0].id
        try:
            return create(context, zone, availability_zone=zone).id
        except exception.AggregateNameExists:
            if last_try:
                raise


def _keys_without_case(aggregate, metadata):
    """``metadata`` with one rule for keys on every database backend.

    MariaDB and MySQL compare the keys without case: two keys of a
    request that differ only in case are refused, a key replaces the one
    stored in another case (:func:`db_aggregates.aggregate_metadata_write`),
    and ``AVAILABILITY_ZONE`` in any case is the zone, checked as such.
    """
    seen = {}
    for key in metadata:
        other = seen.setdefault(key.lower(), key)
        if other != key:
            raise exception.CannotUpdateAggregateMetadata(
                aggregate_id=aggregate.id, reason='the keys %s and %s differ '
                'only in case, and metadata keys are compared without case'
                % tuple(sorted((other, key))))
    return {AZ_KEY if key.lower() == AZ_KEY else key: value
            for key, value in metadata.items()}


def _check_zone_change(context, aggregate, metadata, fail):
    """The rules of a new ``availability_zone`` for ``aggregate``."""
    if AZ_KEY not in metadata:
        return
    zone = metadata[AZ_KEY]
    if not zone:
        raise fail(aggregate_id=aggregate.id, reason=(
            'Aggregate %s does not support empty named availability '
            'zone' % aggregate.name))
    if aggregate.hosts:
        _check_one_zone(
            aggregate,
            db_aggregates.zone_memberships(context, aggregate.hosts),
            zone, fail)
    if zone != aggregate.availability_zone and aggregate.hosts and (
            instance_obj.get_by_hosts(context, aggregate.hosts)):
        raise fail(aggregate_id=aggregate.id, reason=(
            'One or more hosts contain instances in this zone'))


def _check_one_zone(aggregate, memberships, zone, fail):
    """The hosts of ``memberships`` may be in no other zone than ``zone``.

    The refusal names the zone of each other aggregate that holds one of
    the hosts, in id order, as Nova does: once per aggregate, not once per
    host.
    """
    conflicting = {membership.aggregate_id: membership.zone
                   for membership in memberships
                   if membership.aggregate_id != aggregate.id and
                   membership.zone != zone}
    if conflicting:
        raise fail(aggregate_id=aggregate.id, reason=(
            'One or more hosts already in availability zone(s) %s'
            % list(conflicting.values())))


# ----------------------------------- the changes, one transaction each

@db_engine.writer
def write_update(context, aggregate_id, name=None, metadata=None,
                 limit=None):
    """Rename and/or merge ``metadata``; the aggregate's row as now stored.

    With ``limit`` (a FencingLimit), a zone set, changed or unset is
    judged by the fence-storm guard. The UPDATE of the rename locks the
    aggregate's row first, whatever changes.
    """
    metadata = metadata or {}
    guarded = limit is not None and AZ_KEY in metadata
    db_aggregates.aggregate_update(context, aggregate_id, name=name)
    before = (db_aggregates.aggregate_get(context, aggregate_id)
              if guarded else None)
    db_aggregates.aggregate_metadata_write(context, aggregate_id, metadata)
    if guarded:
        _refuse_zone_change(context, limit, before, metadata[AZ_KEY])
    return db_aggregates.aggregate_get(context, aggregate_id)


@db_engine.writer
def write_metadata(context, aggregate_id, metadata, limit=None):
    """Merge ``metadata`` (a None value deletes its key), guarded as update."""
    guarded = limit is not None and AZ_KEY in metadata
    before = (db_aggregates.aggregate_get_locked if guarded
              else db_aggregates.aggregate_get)(context, aggregate_id)
    db_aggregates.aggregate_metadata_write(context, aggregate_id, metadata)
    if guarded:
        _refuse_zone_change(context, limit, before, metadata[AZ_KEY])
    return db_aggregates.aggregate_get(context, aggregate_id)


@db_engine.writer
def write_delete(context, aggregate_id):
    """Delete an aggregate; CannotDeleteAggregate while it holds hosts."""
    aggregate = db_aggregates.aggregate_get(context, aggregate_id)
    if aggregate.hosts:
        raise exception.CannotDeleteAggregate(
            aggregate_id=aggregate.id, reason='Host aggregate is not empty')
    db_aggregates.aggregate_delete(context, aggregate_id)


@db_engine.writer
def write_host_add(context, aggregate_id, host, limit=None):
    """Put ``host`` in the aggregate; with ``limit``, guarded."""
    before = (db_aggregates.aggregate_get_locked if limit is not None
              else db_aggregates.aggregate_get)(context, aggregate_id)
    db_aggregates.aggregate_host_add(context, aggregate_id, host)
    if limit is not None:
        _refuse_host_move(context, limit, before, host, joins=True)
    return db_aggregates.aggregate_get(context, aggregate_id)


@db_engine.writer
def write_host_remove(context, aggregate_id, host, limit=None):
    """Take ``host`` out of the aggregate; with ``limit``, guarded."""
    before = (db_aggregates.aggregate_get_locked(context, aggregate_id)
              if limit is not None else None)
    db_aggregates.aggregate_host_delete(context, aggregate_id, host)
    if limit is not None:
        _refuse_host_move(context, limit, before, host, joins=False)
    return db_aggregates.aggregate_get(context, aggregate_id)


def _refuse_host_move(context, limit, before, host, joins):
    """The guard on ``host`` joining (or leaving) ``before``, as it was."""
    moved = _memberships(before, [host], before.availability_zone)
    if joins:
        _refuse_fence_storm(context, limit, 'Adding host %s to aggregate %s'
                            % (host, before.id), joined=moved)
    else:
        _refuse_fence_storm(context, limit,
                            'Removing host %s from aggregate %s'
                            % (host, before.id), left=moved)


def _memberships(aggregate, hosts, zone):
    """What ``hosts`` in ``aggregate`` are to zones when it has ``zone``."""
    if zone is None:
        return ()
    return tuple(db_zones.Membership(host, aggregate.id, zone)
                 for host in hosts)


def _refuse_zone_change(context, limit, before, zone):
    """The guard on ``before`` (the aggregate as it was) now in ``zone``."""
    old = before.availability_zone
    if zone == old:
        return
    change = ('Removing availability zone %s from aggregate %s'
              % (old, before.id) if zone is None else
              'Setting availability zone %s on aggregate %s'
              % (zone, before.id))
    _refuse_fence_storm(context, limit, change,
                        joined=_memberships(before, before.hosts, zone),
                        left=_memberships(before, before.hosts, old))


def _refuse_fence_storm(context, limit, change, joined=(), left=()):
    """ZoneChangeLimitExceeded if ``joined`` and ``left`` break the rule.

    They are the memberships the change added and removed, written
    already; without any, no zone changes and nothing is read.
    """
    if joined or left:
        fence_storm.lock_checked(
            context, limit, fence_storm.Delta(joined=joined, left=left),
            functools.partial(exception.ZoneChangeLimitExceeded,
                              change=change))


def _require_compute(context, host):
    """ComputeHostNotFound unless ``host`` runs nova-compute.

    The name must match exactly: MariaDB compares text without case, and
    a host added as ``HOST1`` would be a host no service has, as Nova
    guards against.
    """
    try:
        service = db_services.service_get_by_host_and_binary(
            context, host, models.COMPUTE_BINARY)
    except exception.HostBinaryNotFound:
        raise exception.ComputeHostNotFound(host=host)
    if service.host != host:
        raise exception.ComputeHostNotFound(host=host)


def _check_instances_keep_zone(context, host, action, old, new, fail,
                               aggregate_id):
    """``fail`` when the zone of ``host`` would change under instances."""
    if old == new:
        return
    count = len(instance_obj.get_by_host(context, host))
    if count:
        raise fail(aggregate_id=aggregate_id, reason=(
            _INSTANCES_WOULD_CHANGE_ZONE % {'action': action, 'old': old,
                                            'new': new, 'count': count}))
