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

from nova_forcedown.db import host_instances as db_host_instances
from nova_forcedown import exception
from nova_forcedown import notifications
from nova_forcedown.objects import instance as instance_obj
from nova_forcedown.objects import instance_operations as operations

# The instance actions recorded, one per server changed.
MARK_SHUTDOWN_ACTION = 'markShutdown'
RESET_STATE_ACTION = 'resetState'

# States a host-wide reset may set: os-resetState's.
RESET_STATES = operations.RESET_STATES

Change = collections.namedtuple('Change', ('before', 'after'))


def mark_shutdown(context, host, is_up):
    """Mark every live server of ``host`` powered off.

    ``is_up(service)``: the servicegroup's judgement of the host's
    nova-compute service. Notifies ``instance.power_off.end`` for each
    server changed.
    """
    return _act(context, host, is_up, _shut_down, MARK_SHUTDOWN_ACTION,
                'power_off', 'end')


def reset_state(context, host, state, is_up):
    """Set every live server of ``host`` to ``state``, its task cleared.

    Notifies ``instance.reset_state`` for each server changed.
    """
    return _act(context, host, is_up,
                lambda server: {'vm_state': state, 'task_state': None},
                RESET_STATE_ACTION, 'reset_state')


def force_down_marking_shutdown(context, values, uuid=None, host=None,
                                limit=None):
    """Write ``values`` to a compute service; if now forced down, mark.

    In one transaction, every server of the service's host is marked
    powered off as :func:`mark_shutdown` does: what a force-down does with
    ``[DEFAULT] force_down_marks_instances_shutdown``. Returns (the service
    row, or None when there is none; [Change]); notifies
    ``instance.power_off.end`` for each server changed.
    """
    service, found = db_host_instances.service_force_down_with_servers(
        context, values, _shut_down, MARK_SHUTDOWN_ACTION, uuid=uuid,
        host=host, limit=limit)
    return service, _notified(context, found, 'power_off', 'end')


def _shut_down(server):
    values = {'power_state': operations.SHUTDOWN}
    if server.task_state == operations.POWERING_OFF:
        values.update(vm_state=operations.STOPPED, task_state=None)
    elif server.task_state == operations.POWERING_ON:
        values['task_state'] = None
    return values


def _refuse_while_up(is_up, host):
    def refuse(service):
        if is_up(service):
            raise exception.ComputeHostStillUp(host=host)
    return refuse


def _act(context, host, is_up, change, action, event, phase=None):
    found = db_host_instances.instances_act_on_host(
        context, host, _refuse_while_up(is_up, host), change, action)
    return _notified(context, found, event, phase)


def _notified(context, found, event, phase):
    """``found`` (rows before and after) as Changes, each one notified."""
    changes = [Change(instance_obj.decoded(before),
                      instance_obj.decoded(after))
               for before, after in found]
    for before, after in changes:
        notifications.instance_changed(context, before, after, event, phase)
    return changes
