"""An admin's change of a compute service, with its history record and
the fence-storm guard, in one transaction.

Force-down and its clearing, enable and disable (from the API and from
nova-forcedown-manage) all come here. The service row is locked, changed
and its history recorded (:mod:`nova_forcedown.db.service_history`) in
one transaction: three statements, no more, when the guard is off.

With ``[fencing] max_forced_down_fraction`` set, a force-down first
locks every compute service of the host's zones, in id order, and counts
how many are forced down (:mod:`nova_forcedown.db.fence_storm`): two
concurrent force-downs in one zone then take turns, and the second counts
the first. Deleting a compute service is counted the same way.
"""

import functools

from oslo_utils import timeutils
import sqlalchemy as sa

from nova_forcedown.db import engine
from nova_forcedown.db import fence_storm
from nova_forcedown.db import migrations as db_migrations
from nova_forcedown.db import models
from nova_forcedown.db import service_history
from nova_forcedown.db import services as db_services
from nova_forcedown import exception

_SERVICES = models.Service.__table__

# The admin fields a history entry shows, in this order.
_AUDITED_FIELDS = ('disabled', 'disabled_reason', 'forced_down')


@engine.writer
def service_update_compute(context, values, uuid=None, host=None,
                           limit=None):
    """Write ``values`` to the live nova-compute service ``uuid``/on ``host``.

    In one transaction: the row is locked, checked against ``limit`` (a
    :class:`fence_storm.FencingLimit`, None: no guard) when ``values``
    force it down, updated, and the change recorded in the service's
    history. Returns the row as now stored, a :class:`db_services.ServiceRow`,
    or None when there is no such service (the caller finds out why). A
    force-down over the limit is :class:`exception.ForcedDownLimitExceeded`,
    and writes nothing; so is forcing a host up while evacuations away
    from it are not yet ``completed`` by its agent's return
    (:func:`_refuse_force_up_with_evacuations_left`: the agent must first
    remove what was evacuated away).
    """
    connection = context.connection
    target = _target(uuid, host)
    if limit is not None and values.get('forced_down'):
        old = _lock_checked_against_zone(connection, target, limit)
    else:
        old = _lock(connection, *target)
    if old is None:
        return None
    if values.get('forced_down') is False:
        _refuse_force_up_with_evacuations_left(connection, old.host)
    now = _stored_now(connection)
    connection.execute(sa.update(_SERVICES).where(_SERVICES.c.id == old.id)
                       .values(updated_at=now, **values))
    service_history.history_record(
        context, old.host, event_of(values),
        [service_history.Change(field, getattr(old, field), values[field])
         for field in _AUDITED_FIELDS if field in values],
        service_uuid=old.uuid, now=now)
    return old._replace(updated_at=now, **values)


def _refuse_force_up_with_evacuations_left(connection, host):
    """Refuse to force ``host`` up while it may still run evacuated servers.

    That is while an evacuation away from it is open: its agent has not
    come back to remove what left it and complete the migration. Only
    ``done`` ones: Nova's refusal, word for word; any still ``accepted``
    or ``pre-migrating`` (the destination has not rebuilt yet): a 409
    naming them, as Nova does not guard that.
    """
    migrations = models.Migration.__table__
    counts = dict(connection.execute(
        sa.select(migrations.c.status, sa.func.count())
        .where(migrations.c.source_compute == host,
               migrations.c.migration_type == db_migrations.EVACUATION,
               migrations.c.status.in_(db_migrations.OPEN),
               migrations.c.deleted == 0)
        .group_by(migrations.c.status)).all())
    if not counts:
        return
    if set(counts) == {db_migrations.DONE}:
        raise exception.ForceUpWithEvacuationsLeft(host=host)
    raise exception.ForceUpWithEvacuationsInProgress(
        host=host, count=sum(counts.values()),
        states=', '.join('%d %s' % (counts[status], status)
                         for status in db_migrations.OPEN
                         if status in counts))


def _stored_now(connection):
    """Now, as the database stores it: the row returned is the row read.

    MariaDB's DATETIME columns keep whole seconds.
    """
    now = timeutils.utcnow()
    if connection.dialect.name == 'mysql':
        now = now.replace(microsecond=0)
    return now


def event_of(values):
    """What a history entry calls the change ``values``."""
    events = []
    if 'disabled' in values:
        events.append('disable' if values['disabled'] else 'enable')
    if 'forced_down' in values:
        events.append('force-down' if values['forced_down']
                      else 'clear-force-down')
    return ','.join(events) or 'update'


def _target(uuid, host):
    return (_SERVICES.c.deleted == 0,
            _SERVICES.c.binary == models.COMPUTE_BINARY,
            _SERVICES.c.uuid == uuid if uuid is not None
            else _SERVICES.c.host == host)


def _lock(connection, *criteria):
    row = connection.execute(
        sa.select(_SERVICES).where(*criteria).with_for_update()).first()
    return None if row is None else db_services.ServiceRow._make(row)


def _lock_checked_against_zone(connection, target, limit):
    """The target row, locked with its zones', once the guard lets it go.

    Raises ForcedDownLimitExceeded when forcing it down would break the
    fence-storm rule (:mod:`nova_forcedown.db.fence_storm`) in a zone of
    its host.
    """
    found = connection.execute(sa.select(_SERVICES).where(*target)).first()
    if found is None:
        return None
    locked = fence_storm.lock_checked(
        connection, limit, fence_storm.Delta(forced_down=found.host),
        functools.partial(exception.ForcedDownLimitExceeded,
                          host=found.host))
    if found.id not in locked:
        return None  # Deleted since it was found.
    return _lock(connection, _SERVICES.c.id == found.id, *target)


@engine.writer
def service_destroy_compute(context, service_id, limit):
    """:func:`db_services.service_destroy` of a compute service, guarded.

    In its transaction, first Nova's refusal of a host with instances,
    then the compute services of the host's zones locked and counted
    without it: ZoneChangeLimitExceeded when that breaks the fence-storm
    rule (``limit``, a :class:`fence_storm.FencingLimit`).
    """
    service = db_services.service_get(context, service_id)
    if db_services.service_has_instances(context, service.host):
        raise exception.ServiceHostsInstances()
    fence_storm.lock_checked(
        context.connection, limit,
        fence_storm.Delta(deleted=service.host),
        functools.partial(exception.ZoneChangeLimitExceeded,
                          change='Deleting the compute service of host %s'
                          % service.host))
    db_services.service_destroy(context, service_id)
