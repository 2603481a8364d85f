"""What an agent records as it carries out a task: one transaction at each end.

A task's start records its action's event and, for a rebuild, moves the
evacuation to ``pre-migrating``. Its end clears the server's task with
what the driver left, finishes the event and, for a rebuild, moves the
evacuation to ``done`` or ``failed``: one transaction, so an agent that
dies while ending a task never leaves a server rebuilt whose migration
says otherwise. The driver's work runs between the two, in no
transaction.
"""

import collections
import traceback

from nova_forcedown.db import engine as db_engine
from nova_forcedown.objects import evacuation
from nova_forcedown.objects import instance_action
from nova_forcedown.objects import instance_build
from nova_forcedown.objects import instance_fault
from nova_forcedown.objects import instance_operations as operations
from nova_forcedown.objects import migration as migration_obj

REBUILD_EVENT = 'compute_rebuild_instance'

# ``superseded``: a rebuild whose evacuation a retry failed before this
# destination started it: nothing is to be built.
Started = collections.namedtuple(
    'Started', ('action_id', 'event_id', 'migration', 'rebuild',
                'superseded'), defaults=(False,))


class Failure(collections.namedtuple('Failure', ('message', 'traceback'))):
    """How a driver failed a task: a fault's message and its traceback."""

    @classmethod
    def of(cls, error):
        """The failure of ``error``; call it where it is being handled."""
        return cls(instance_fault.message_of(error), traceback.format_exc())


@db_engine.writer
def start(context, server):
    """Record the start of ``server``'s task; its :class:`Started`.

    A rebuild starts by moving its evacuation to pre-migrating, unless a
    retry failed it first: then nothing is recorded and it is superseded.
    """
    rebuild = server.task_state == operations.REBUILDING
    migration = (migration_obj.latest_evacuation(context, server.uuid,
                                                 server.host)
                 if rebuild else None)
    if migration is not None and not _started(context, migration):
        return Started(None, None, migration, rebuild, superseded=True)
    if rebuild:
        name, event = evacuation.ACTION, REBUILD_EVENT
    else:
        task = operations.TASKS[server.task_state]
        name, event = task.action, task.event
    action = instance_action.latest(context, server.uuid, name)
    action_id = action.id if action is not None else None
    event_id = (instance_action.event_start(context, action_id, event,
                                            server.host)
                if action is not None else None)
    return Started(action_id, event_id, migration, rebuild)


def _started(context, migration):
    """Whether this destination may rebuild: its evacuation not failed.

    Accepted becomes pre-migrating here. A retry fails an evacuation no
    destination started: one failed before, or meanwhile (the move lost
    its race), is not built. Any other status (pre-migrating: a rebuild
    the agent's death interrupted; completed: a source that cleaned up
    first) still is.
    """
    if migration.status == migration_obj.ACCEPTED and migration_obj.move(
            context, migration.id, migration_obj.PRE_MIGRATING):
        return True
    now = migration_obj.latest_evacuation(context, migration.instance_uuid,
                                          migration.dest_compute)
    return now is not None and now.status != migration_obj.FAILED


@db_engine.writer
def build_failed(context, server, started, failure, choices=None,
                 attempts=None):
    """End a build the driver failed; the server on its next host, or None.

    One transaction: the fault and the event in error, then the server
    moved to the first of ``choices`` that takes it
    (:func:`.instance_build.reschedule`). None (no choice, or
    ``choices`` None: no retry is left) leaves it in error off the host,
    its room released, with Nova's retries fault; ``attempts``: the
    number of hosts tried, when that is why.
    """
    instance_fault.record(context, server.uuid, failure.message,
                          details=failure.traceback, host=server.host)
    if started.event_id is not None:
        instance_action.event_finish(context, started.action_id,
                                     started.event_id, instance_action.ERROR,
                                     failure.traceback)
    moved = (instance_build.reschedule(context, server, choices)
             if choices is not None else None)
    if moved is not None:
        return moved or None
    if operations.end_task(context, server, {
            'vm_state': operations.ERROR, 'host': None,
            'node': None}) is not None:
        message = (instance_build.ATTEMPTS_EXCEEDED % {
            'attempts': attempts, 'uuid': server.uuid,
            'error': failure.message} if attempts is not None else
            instance_build.HOSTS_EXHAUSTED % {'uuid': server.uuid})
        instance_fault.record(context, server.uuid, message)
    return None


@db_engine.writer
def end(context, server, started, values, failure=None):
    """End the task ``started`` with ``values``; the server as it now is.

    ``failure``: the driver's :class:`Failure`. The event then ends in
    error with its traceback, the server has a fault, and a rebuild's
    evacuation ``failed``. None when the task was gone (reset, or the
    server moved on by a retried evacuation) and nothing of the server
    was written: a rebuild's event then ends in error, as what it built
    is not the server's.
    """
    after = operations.end_task(context, server, values)
    if failure is not None:
        instance_fault.record(context, server.uuid, failure.message,
                              details=failure.traceback, host=server.host)
    lost = after is None and started.rebuild
    if started.migration is not None and (failure is not None or not lost):
        migration_obj.move(context, started.migration.id,
                           migration_obj.FAILED if failure is not None
                           else migration_obj.DONE)
    if started.event_id is not None:
        result = (instance_action.ERROR if failure is not None or lost
                  else instance_action.SUCCESS)
        instance_action.event_finish(
            context, started.action_id, started.event_id, result,
            failure.traceback if failure is not None else None)
    return after
