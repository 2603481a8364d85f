"""Query function for host-wide changes of servers: every live server of
one compute host, checked, changed and recorded in one transaction.

The host's nova-compute service row is locked first, so whether the
service may be down is decided on the row as it stays until the commit:
a force-down cleared, or a heartbeat written, meanwhile waits for it.
"""

from oslo_utils import timeutils
import sqlalchemy as sa

from nova_forcedown.db import engine
from nova_forcedown.db import instance_actions as db_instance_actions
from nova_forcedown.db import instances as db_instances
from nova_forcedown.db import models
from nova_forcedown.db import service_admin as db_service_admin
from nova_forcedown.db import service_history
from nova_forcedown.db import services as db_services
from nova_forcedown import exception

_INSTANCES = models.Instance.__table__
_SERVICES = models.Service.__table__

# Ids per UPDATE: well under every backend's limit of bound parameters.
_IDS_PER_UPDATE = 500

# What the service's history calls each host-wide action.
_HISTORY_EVENTS = {'markShutdown': 'mark-servers-shutdown',
                   'resetState': 'reset-servers-state'}


def _lock_compute_service(connection, host):
    """The live nova-compute service of ``host``, locked; None if none.

    On SQLite the transaction takes the database's write lock before it
    reads (:func:`nova_forcedown.db.engine.write_first` says why); other
    backends lock the row with SELECT ... FOR UPDATE.
    """
    where = (_SERVICES.c.host == host,
             _SERVICES.c.binary == models.COMPUTE_BINARY,
             _SERVICES.c.deleted == 0)
    row = connection.execute(
        sa.select(_SERVICES).where(*where).with_for_update()).first()
    return None if row is None else db_services.ServiceRow._make(row)


def _changed_values(row, wanted):
    """What of ``wanted`` (column -> value) differs from ``row``."""
    return {column: value for column, value in (wanted or {}).items()
            if getattr(row, column) != value}


@engine.writer
def instances_act_on_host(context, host, refuse, change, action):
    """Check, change and record ``action`` on every live server of ``host``.

    In one transaction: the host's nova-compute service is locked
    (ComputeHostNotFound if it has none) and ``refuse(service_row)``
    raises when the change may not run now; then the servers change as
    :func:`_change_servers` says.

    Returns [(before, after)] instance rows of the servers changed, in id
    order; the others are left alone, unrecorded.
    """
    connection = context.connection
    service = _lock_compute_service(connection, host)
    if service is None:
        raise exception.ComputeHostNotFound(host=host)
    refuse(service)
    return _change_servers(connection, context, host, change, action)


@engine.writer
def service_force_down_with_servers(context, values, change, action,
                                    uuid=None, host=None, limit=None):
    """Write ``values`` to a compute service, then change its servers.

    In one transaction: what :func:`db.service_admin.service_update_compute`
    writes (the service ``uuid`` or on ``host``, checked against the
    fence-storm ``limit`` and recorded in its history); then, if it is now
    forced down, every live server of its host changes as
    :func:`_change_servers` says. Returns (the service row, or None when
    there is none; [(before, after)] of the servers changed).
    """
    connection = context.connection
    service = db_service_admin.service_update_compute(
        context, values, uuid=uuid, host=host, limit=limit)
    if service is None or not service.forced_down:
        return service, []
    return service, _change_servers(connection, context, service.host,
                                    change, action)


def _change_servers(connection, context, host, change, action):
    """Change the live servers of ``host`` and record ``action`` for each.

    The servers are read and locked; ``change(row)`` gives the values
    each should have; those that differ are updated (one UPDATE per
    distinct set of values) and each gets an action record of the
    request. Returns [(before, after)] rows of the servers changed.
    """
    rows = connection.execute(
        sa.select(_INSTANCES).where(_INSTANCES.c.host == host,
                                    _INSTANCES.c.deleted == 0)
        .order_by(_INSTANCES.c.id).with_for_update())
    now = timeutils.utcnow()
    changed, ids_by_values = [], {}
    for found in rows:
        row = db_instances.InstanceRow._make(found)
        values = _changed_values(row, change(row))
        if not values:
            continue
        values['updated_at'] = now
        ids_by_values.setdefault(tuple(sorted(values.items())),
                                 []).append(row.id)
        changed.append((row, row._replace(**values)))
    for values, ids in ids_by_values.items():
        for start in range(0, len(ids), _IDS_PER_UPDATE):
            connection.execute(_INSTANCES.update().where(
                _INSTANCES.c.id.in_(ids[start:start + _IDS_PER_UPDATE]))
                .values(**dict(values)))
    uuids = [after.uuid for _, after in changed]
    db_instance_actions.record_actions(context, uuids, action,
                                       now)
    if changed:
        service_history.history_record(
            context, host, _HISTORY_EVENTS[action],
            [service_history.Change('servers', None, uuids)], now=now)
    return changed
