"""What a server's power and state actions change, and when they may.

Lock, unlock, reset state, stop and start, with Nova's rules: a locked
server refuses stop and start to anyone but an admin; stop needs a
launched server that is active or in error, start a stopped one; neither
runs while another task does. Each check, its change and the action
record are one transaction (:func:`act`); the host's agent then carries
out a stop or a start (``task_state`` powering-off or powering-on) and
ends the task. With RPC on, the agent is told of it once the transaction
commits (:func:`tell_host`); else it finds it at its next look.

Policies are the API's: the caller authorizes against the server first.
"""

from oslo_utils import timeutils

from nova_forcedown.db import engine as db_engine
from nova_forcedown.db import instance_actions as db_instance_actions
from nova_forcedown.db import instances as db_instances
from nova_forcedown.db import services as db_services
from nova_forcedown import exception
from nova_forcedown import notifications
from nova_forcedown.objects import instance as instance_obj
from nova_forcedown import rpc
from nova_forcedown.rpc import compute as rpc_compute

# vm_state, task_state and power_state values, as Nova names them.
ACTIVE = 'active'
ERROR = 'error'
STOPPED = 'stopped'
POWERING_OFF = 'powering-off'
POWERING_ON = 'powering-on'
REBUILDING = 'rebuilding'
BUILDING = 'building'
SPAWNING = 'spawning'
DELETING = 'deleting'
DELETED = 'deleted'
NOSTATE = 0
RUNNING = 1
SHUTDOWN = 4
CRASHED = 6

# States os-resetState may set.
RESET_STATES = (ACTIVE, ERROR)

# Who holds a lock.
OWNER = 'owner'
ADMIN = 'admin'


def locker(context, server):
    """Who ``context`` locks ``server`` as: its project's owner or an admin."""
    return OWNER if server.project_id == context.project_id else ADMIN


def holds_lock_as_expected(context, server):
    """Whether the server is unlocked or locked by who ``context`` is.

    When not, unlocking needs the unlock_override rule, as in Nova.
    """
    return server.locked_by in (None, locker(context, server))


def lock(context, uuid, reason=None, project_id=None):
    """Lock the server; a no-op for its owner when it is already locked."""

    def change(server):
        holder = locker(context, server)
        if server.locked_by is not None and holder == OWNER:
            return None
        values = {'locked_by': holder}
        if reason:
            values['locked_reason'] = reason
        return values

    return act(context, uuid, change, 'lock', project_id, 'lock')


def unlock(context, uuid, project_id=None):
    """Unlock the server; recorded even when it was not locked."""
    return act(context, uuid, _unlocked, 'unlock', project_id, 'unlock')


def _unlocked(server):
    return {'locked_by': None, 'locked_reason': None}


def reset_state(context, uuid, state, project_id=None):
    """Set vm_state and clear the task, whatever they were."""
    return act(context, uuid,
               lambda server: {'vm_state': state, 'task_state': None},
               'resetState', project_id)


def stop(context, uuid, project_id=None):
    """Ask the server's host to power it off."""

    def change(server):
        _check(context, server, 'stop', (ACTIVE, ERROR))
        return {'task_state': POWERING_OFF, 'progress': 0}

    return tell_host(context, act(context, uuid, change, 'stop', project_id),
                     rpc_compute.STOP)


def start(context, uuid, project_id=None):
    """Ask the server's host to power it on."""

    def change(server):
        _check(context, server, 'start', (STOPPED,))
        return {'task_state': POWERING_ON}

    return tell_host(context, act(context, uuid, change, 'start', project_id),
                     rpc_compute.START)


class Task:
    """A power task as the host carries it out.

    ``action``: the recorded action it belongs to; ``event``: the event
    the host records; ``notification``: instance.<notification>.start
    and .end; ``vm_state`` and ``power_state``: where it leaves the server.
    """

    def __init__(self, action, event, notification, vm_state, power_state):
        self.action = action
        self.event = event
        self.notification = notification
        self.vm_state = vm_state
        self.power_state = power_state


TASKS = {
    POWERING_OFF: Task('stop', 'compute_stop_instance', 'power_off',
                       STOPPED, SHUTDOWN),
    POWERING_ON: Task('start', 'compute_start_instance', 'power_on',
                      ACTIVE, RUNNING),
    # Build and delete have steps of their own (compute.tasks).
    SPAWNING: Task('create', 'compute__do_build_and_run_instance', 'create',
                   ACTIVE, RUNNING),
    DELETING: Task('delete', 'compute_terminate_instance', 'delete',
                   DELETED, NOSTATE),
}


def deleted_values(server, now):
    """What a deleted server's row holds: soft-deleted, as Nova's."""
    return {'vm_state': DELETED, 'task_state': None,
            'power_state': NOSTATE, 'terminated_at': now,
            'deleted_at': now, 'deleted': server.id}


def pending_tasks(context, hosts, uuids=None):
    """Servers on ``hosts`` with a task waiting, oldest first.

    A task of :data:`TASKS` (power, build, delete), or the rebuild of a
    server evacuated to one of ``hosts``; only among ``uuids`` when given.
    """
    return [instance_obj.decoded(server) for server in
            db_instances.instance_get_tasks(
                context, hosts, tuple(TASKS) + (REBUILDING,), uuids)]


def end_task(context, server, values):
    """End the server's task with ``values`` (task_state cleared).

    The server as it now is, or None when its task was gone (reset,
    deleted, moved to another host) and nothing was written.
    """
    values = dict(values, task_state=None)
    if not db_instances.instance_finish_task(context, server.uuid,
                                             server.host, server.task_state,
                                             values):
        return None
    return server._replace(**values)


def hosts_of(context, uuids):
    """{uuid: host} of the live servers among ``uuids``."""
    return db_instances.instance_hosts(context, uuids)


def tell_host(context, server, method):
    """Cast ``method`` for ``server``'s task to its host's agent; ``server``.

    Only with RPC on, and after the task's transaction committed: the
    agent reads the task from the database.
    """
    if rpc.enabled():
        agent = db_services.service_rpc_server(context, server.host)
        rpc.cast(context, agent or server.host, method, server.uuid)
    return server


def _check(context, server, action, vm_states):
    """Nova's checks of a power action, in Nova's order."""
    if server.locked_by is not None and not context.is_admin:
        raise exception.InstanceIsLocked(instance_uuid=server.uuid)
    if not server.host:
        raise exception.InstanceNotReady(instance_id=server.uuid)
    check_state(server, action, vm_states)


def check_state(server, action, vm_states):
    """vm_state among ``vm_states``, no task, launched: else 409."""
    if server.vm_state not in vm_states:
        raise exception.InstanceInvalidState(
            action=action, instance_uuid=server.uuid, attr='vm_state',
            state=server.vm_state)
    if server.task_state is not None:
        raise exception.InstanceInvalidState(
            action=action, instance_uuid=server.uuid, attr='task_state',
            state=server.task_state)
    if server.launched_at is None:
        raise exception.InstanceInvalidState(action=action,
                                             instance_uuid=server.uuid)


def act(context, uuid, change, action, project_id=None, event=None):
    """Run ``change`` as action ``action``; notify ``instance.<event>``.

    ``change(server)`` is called in the action's transaction with the
    server's row locked (InstanceNotFound if there is none, or if
    ``project_id`` is given and it is another project's); it raises when
    the action may not run now, else returns the values to write, or None
    when there is nothing to do. It may write more in the same
    transaction, and is run again if a deadlock makes it start over.

    Returns the server as it now is, or None when there was nothing to do.
    """
    before, server = _acted(context, uuid, change, action, project_id)
    if server is None:
        return None
    server = instance_obj.decoded(server)
    notifications.instance_changed(context, before, server, event)
    return server


@db_engine.writer
def _acted(context, uuid, change, action, project_id):
    """(the server before, after) of one action, in one transaction."""
    before = db_instances.instance_get_locked(context, uuid, project_id)
    values = change(before)
    if values is None:
        return before, None
    now = timeutils.utcnow()
    after = db_instances.instance_update(context, before,
                                         dict(values, updated_at=now))
    db_instance_actions.record_action(context, uuid, action, now)
    return before, after
