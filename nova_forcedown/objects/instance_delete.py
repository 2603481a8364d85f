"""Delete a server as Nova does: by its host's agent, or at once.

A server whose host is up gets the task ``deleting`` and its agent is
told; the agent destroys it through its driver and records it deleted
(:mod:`nova_forcedown.compute.tasks`), which releases what it took of its
host. A server never placed (no host), or whose host is down (forced down
included), is deleted at once, as Nova's API deletes one locally: that
host's agent, when it comes back, removes the copy the database no
longer places there before it reports anything; so is one whose delete
waits on a host that went down since. A locked server is refused to all
but an admin; one already being deleted by an up host is left to that.
"""

from oslo_utils import timeutils

from nova_forcedown import exception
from nova_forcedown import notifications
from nova_forcedown.objects import instance_operations as operations
from nova_forcedown.rpc import compute as rpc_compute

ACTION = 'delete'


def delete(context, seen, host_up, force=False, project_id=None):
    """Delete the server ``seen`` (its record as the caller read it).

    ``host_up``: whether the compute service of ``seen``'s host is up, as
    the servicegroup says. The transaction reads the server again, locked;
    a server that moved meanwhile is deleted by its new host's agent.
    ``force``: forceDelete, which Nova refuses while a task runs.
    """
    local = {}

    def change(server):
        if server.locked_by is not None and not context.is_admin:
            raise exception.InstanceIsLocked(instance_uuid=server.uuid)
        if force and server.task_state is not None:
            raise exception.InstanceInvalidState(
                action='forceDelete', instance_uuid=server.uuid,
                attr='task_state', state=server.task_state)
        if server.host is None or (server.host == seen.host and
                                   not host_up):
            local['before'] = server
            return operations.deleted_values(server, timeutils.utcnow())
        if server.task_state == operations.DELETING:
            return None
        return {'task_state': operations.DELETING}

    after = operations.act(context, seen.uuid, change, ACTION, project_id)
    if after is None:
        return
    if 'before' in local:
        for phase in ('start', 'end'):
            notifications.instance_changed(context, local['before'], after,
                                           ACTION, phase)
        return
    operations.tell_host(context, after, rpc_compute.TERMINATE)
