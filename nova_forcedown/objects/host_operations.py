"""Host-wide server operations for a fenced host (the blueprint's future
work, which Nova never built).

``mark_shutdown`` records that every server of the host is powered off
(``power_state`` 4, shutdown): the fence agent has guaranteed it. Each
server keeps its ``vm_state``, so what it was meant to be (active or
stopped) survives for the evacuation or restart that follows, unlike
Nova's power-state sync, which would make an active server ``stopped``
and so have it evacuated stopped. A pending power task is settled: a
``powering-off`` server is off as its stop asked (``stopped``, task
cleared), a ``powering-on`` one did not start (task cleared, it stays
``stopped``); other tasks are left to their owners.

``reset_state`` does what os-resetState does to every server of the
host: ``vm_state`` active or error, task cleared.

Both refuse (ComputeHostStillUp, a conflict) while the host's
nova-compute service is up, judged by the caller's servicegroup on the
service row locked for the transaction; both change every server, and
record an action for each, in that one transaction; servers already as
asked are left alone. They return what they changed, as
:class:`Change` records, and notify each change once it is committed.
"""

import collections

from oslo_utils import timeutils

from nova_forcedown.db import engine as db_engine
from nova_forcedown.db import instance_actions as db_instance_actions
from nova_forcedown.db import instances as db_instances
from nova_forcedown.db import service_history as db_history
from nova_forcedown.db import services as db_services
from nova_forcedown import exception
from nova_forcedown import notifications
from nova_forcedown.objects import instance as instance_obj
from nova_forcedown.objects import instance_operations as operations

# The instance actions recorded, one per server changed.
MARK_SHUTDOWN_ACTION = 'markShutdown'
RESET_STATE_ACTION = 'resetState'

# What the service's history calls each host-wide action.
_HISTORY_EVENTS = {MARK_SHUTDOWN_ACTION: 'mark-servers-shutdown',
                   RESET_STATE_ACTION: 'reset-servers-state'}

# States a host-wide reset may set: os-resetState's.
RESET_STATES = operations.RESET_STATES

Change = collections.namedtuple('Change', ('before', 'after'))


def mark_shutdown(context, host, is_up):
    """Mark every live server of ``host`` powered off.

    ``is_up(service)``: the servicegroup's judgement of the host's
    nova-compute service. Notifies ``instance.power_off.end`` for each
    server changed.
    """
    return _notified(context, _changed_on_host(
        context, host, is_up, _shut_down, MARK_SHUTDOWN_ACTION),
        'power_off', 'end')


def reset_state(context, host, state, is_up):
    """Set every live server of ``host`` to ``state``, its task cleared.

    Notifies ``instance.reset_state`` for each server changed.
    """
    return _notified(context, _changed_on_host(
        context, host, is_up,
        lambda server: {'vm_state': state, 'task_state': None},
        RESET_STATE_ACTION), 'reset_state')


def mark_servers_shutdown(context, host):
    """In the caller's transaction, mark the servers of ``host`` off.

    What a force-down does with ``[DEFAULT]
    force_down_marks_instances_shutdown``. Returns [(before, after)] rows,
    for :func:`notify_marked` once the transaction is committed.
    """
    return _change_servers(context, host, _shut_down, MARK_SHUTDOWN_ACTION)


def notify_marked(context, found):
    """Notify ``instance.power_off.end`` for each server marked off."""
    return _notified(context, found, 'power_off', 'end')


def _shut_down(server):
    values = {'power_state': operations.SHUTDOWN}
    if server.task_state == operations.POWERING_OFF:
        values.update(vm_state=operations.STOPPED, task_state=None)
    elif server.task_state == operations.POWERING_ON:
        values['task_state'] = None
    return values


@db_engine.writer
def _changed_on_host(context, host, is_up, change, action):
    """Check, change and record ``action`` on every live server of ``host``.

    In one transaction: the host's nova-compute service is locked
    (ComputeHostNotFound if it has none), so whether it may be down is
    decided on the row as it stays until the commit: a force-down cleared,
    or a heartbeat written, meanwhile waits for it. ComputeHostStillUp
    while it is up; then the servers change as :func:`_change_servers`
    says.
    """
    service = db_services.service_lock_compute(context, host=host)
    if service is None:
        raise exception.ComputeHostNotFound(host=host)
    if is_up(service):
        raise exception.ComputeHostStillUp(host=host)
    return _change_servers(context, host, change, action)


def _change_servers(context, host, change, action):
    """Change the live servers of ``host`` and record ``action`` for each.

    The servers are read and locked; ``change(row)`` gives the values
    each should have; those that differ are written and each gets an
    action record of the request, and the host's history one entry.
    Returns [(before, after)] rows of the servers changed, in id order.
    """
    now = timeutils.utcnow()
    writes = []
    for row in db_instances.instance_lock_all_on_host(context, host):
        values = {column: value for column, value in change(row).items()
                  if getattr(row, column) != value}
        if values:
            writes.append((row, dict(values, updated_at=now)))
    if not writes:
        return []
    db_instances.instance_update_many(context, writes)
    uuids = [row.uuid for row, _ in writes]
    db_instance_actions.record_actions(context, uuids, action, now)
    db_history.history_record(
        context, host, _HISTORY_EVENTS[action],
        [db_history.Change('servers', None, uuids)], now=now)
    return [(row, row._replace(**values)) for row, values in writes]


def _notified(context, found, event, phase=None):
    """``found`` (rows before and after) as Changes, each one notified."""
    changes = [Change(instance_obj.decoded(before),
                      instance_obj.decoded(after))
               for before, after in found]
    for before, after in changes:
        notifications.instance_changed(context, before, after, event, phase)
    return changes
