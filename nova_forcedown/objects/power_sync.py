"""A server's power state, aligned with what its host runs, as Nova does.

Nova's compute compares, every ``sync_power_state_interval``, the power
state the database holds with the one its hypervisor reports, for the
servers with no task under way. It writes the hypervisor's, then:

* an active server found shut down or crashed (it stopped by itself) is
  stopped through the stop action, so that it ends ``stopped``;
* a stopped server found running is stopped again the same way;
* a server its host does not run at all (power state NOSTATE: a host
  that booted empty) keeps its vm_state, as Nova leaves it.

The stop needs no lock check: it is the cloud's own correction, recorded
as a ``stop`` action with no user, as Nova's is.
"""

from oslo_utils import timeutils

from nova_forcedown.db import engine as db_engine
from nova_forcedown.db import instance_actions as db_instance_actions
from nova_forcedown.db import instances as db_instances
from nova_forcedown import notifications
from nova_forcedown.objects import instance as instance_obj
from nova_forcedown.objects import instance_operations as operations
from nova_forcedown.rpc import compute as rpc_compute

STOPPED_BY_ITSELF = (operations.SHUTDOWN, operations.CRASHED)


def needs_stop(vm_state, found):
    """Whether a server in ``vm_state``, found ``found``, is to be stopped."""
    if vm_state == operations.ACTIVE:
        return found in STOPPED_BY_ITSELF
    if vm_state == operations.STOPPED:
        return found not in STOPPED_BY_ITSELF + (operations.NOSTATE,)
    return False


def out_of_step(server, found):
    """Whether ``server``'s record disagrees with ``found`` (its host's)."""
    return server.task_state is None and (
        server.power_state != found or needs_stop(server.vm_state, found))


def align(context, seen, found):
    """Align ``seen`` (a server as read) with ``found``; the server after.

    None when nothing was written: the server changed since it was read
    (a task started, it moved, its vm_state changed), and the next sync
    looks again. A stop is told to the host once it is recorded.
    """
    before, after = _aligned(context, seen, found)
    if after is None:
        return None
    after = instance_obj.decoded(after)
    notifications.instance_task_ended(context, before, after)
    if after.task_state == operations.POWERING_OFF:
        operations.tell_host(context, after, rpc_compute.STOP)
    return after


@db_engine.writer
def _aligned(context, seen, found):
    server = db_instances.instance_get_locked(context, seen.uuid)
    if (server.task_state, server.host, server.vm_state) != (
            None, seen.host, seen.vm_state):
        return server, None
    values = {}
    if server.power_state != found:
        values['power_state'] = found
    stop = needs_stop(server.vm_state, found)
    if stop:
        values.update(task_state=operations.POWERING_OFF, progress=0)
    if not values:
        return server, None
    now = timeutils.utcnow()
    after = db_instances.instance_update(context, server,
                                         dict(values, updated_at=now))
    if stop:
        db_instance_actions.record_action(context, server.uuid, 'stop', now)
    return server, after
