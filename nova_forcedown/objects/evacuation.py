"""Evacuate a server from a host that is down, as Nova accepts it.

One operation, one transaction (the server's instance action): the checks
of Nova's compute API in its order, the claim of the first destination
that still fits (the scheduler chose them before,
:func:`nova_forcedown.scheduler.host_selection.evacuation_plan`), the
server's move to it (task_state ``rebuilding``), the migration row, the
history entry and the action record; then ``instance.evacuate`` is
notified from the API, as Nova does. The destination's agent then
rebuilds the server there (:mod:`nova_forcedown.compute.tasks`) and the
source's agent, when it comes back, cleans up what was evacuated away.

Nova schedules after its answer; here the destination is chosen before
it, so a request with no valid host is still answered 200 (as in Nova)
but its migration is already ``error`` and, unless the host was forced,
the server in vm_state error, as Nova leaves it once its scheduler fails.
"""

from oslo_utils import timeutils

from nova_forcedown.db import migrations as db_migrations
from nova_forcedown.db import service_history
from nova_forcedown import exception
from nova_forcedown.objects import compute_node as compute_node_obj
from nova_forcedown.objects import instance_fault
from nova_forcedown.objects import instance_operations as operations
from nova_forcedown.rpc import compute as rpc_compute

# The instance action an evacuation records; the destination's rebuild
# records its event under it.
ACTION = 'evacuate'

# vm_states an evacuation starts from.
ALLOWED_VM_STATES = (operations.ACTIVE, operations.STOPPED,
                     operations.ERROR)


def target_vm_state(vm_state, stop_after):
    """The vm_state an evacuated server ends in.

    Stopped stays stopped; error and active become active, or stopped
    from 2.95 (``stop_after``).
    """
    if vm_state == operations.STOPPED or stop_after:
        return operations.STOPPED
    return operations.ACTIVE


def evacuate(context, plan, seen, host=None, force=False, stop_after=False,
             project_id=None):
    """Accept the evacuation of a server; its migration row.

    ``seen`` is the server's record as its caller read it (and authorized
    the request against); the transaction reads it again, locked.
    ``plan``: the scheduler's Plan for it (the source's liveness, the
    destinations to try). ``host``: the destination asked for; ``force``:
    whether the filters were skipped for it.
    """
    accepted = {}

    def change(server):
        if host == server.host:
            raise exception.EvacuationTargetIsSource()
        _check_state(server)
        if server.host != seen.host:
            raise exception.ComputeServiceInUse(host=server.host)
        unstarted_retry = _unstarted_retry(plan, server)
        if plan.source_up and not unstarted_retry:
            raise exception.ComputeServiceInUse(host=server.host)
        if unstarted_retry:
            found = _claimed(context, plan.choices, server)
            if found is None:
                # No room elsewhere: the first evacuation stands, as its
                # destination may still rebuild it.
                raise exception.ComputeServiceInUse(host=server.host)
            source = _source(context, server, unstarted_retry)
        else:
            source = _source(context, server)
            found = _claimed(context, plan.choices, server)
        values, accepted['migration'] = _accepted(
            context, server, source, found, host, force, stop_after)
        return values

    after = operations.act(context, seen.uuid, change, ACTION, project_id,
                           event=ACTION)
    if after.task_state == operations.REBUILDING:
        operations.tell_host(context, after, rpc_compute.REBUILD)
    return accepted['migration']


def _check_state(server):
    """Nova's checks of an evacuation, but for a retry.

    A server still ``rebuilding`` may be evacuated again: its destination
    died before it rebuilt it (that host is down, or the evacuation is
    refused as still in use), and the operator retries elsewhere.
    """
    if server.task_state == operations.REBUILDING:
        server = server._replace(task_state=None)
    operations.check_state(server, ACTION, ALLOWED_VM_STATES)


def _unstarted_retry(plan, server):
    """Whether a retry is judged on the first evacuation's source.

    The server is still rebuilding, its destination (now its host) looks
    up, and the source it was evacuated from is down: as Nova judges it,
    where the server's host stays the source until the destination starts
    the rebuild. Accepted only while no destination started it
    (:func:`_source`): a destination whose agent died before starting
    would keep the server waiting until service_down_time.
    """
    return (plan.source_up and
            server.task_state == operations.REBUILDING and
            plan.retry_source_up is False)


def _source(context, server, unstarted_retry=False):
    """(host, node) a new evacuation of ``server`` leaves from.

    Its host, unless it is a retry: the evacuations it supersedes fail
    (releasing their claim, as the server leaves their destination), and
    when their source has not cleaned up yet, the new one leaves from that
    source, whose force-up then still waits for its clean-up. A retry
    judged on that source supersedes evacuations no destination started,
    or none: ComputeServiceInUse.
    """
    if server.task_state != operations.REBUILDING:
        return server.host, server.node
    if unstarted_retry:
        superseded = db_migrations.migration_fail_unstarted(context,
                                                            server.uuid)
        if superseded is None:
            raise exception.ComputeServiceInUse(host=server.host)
    else:
        superseded = db_migrations.migration_fail_open(context, server.uuid)
    if not superseded:
        return server.host, server.node
    return superseded[-1].source_compute, superseded[-1].source_node


def _claimed(context, choices, server):
    """The first choice the server fits on, its node claimed; or None.

    A forced destination is claimed as well: force skips the filters (up,
    enabled, zone), never the capacity, as Nova's conductor claims it.
    """
    for capacity in choices:
        if compute_node_obj.claim(context, capacity, server):
            return capacity
    return None


def _accepted(context, server, source, found, host, force, stop_after):
    """(the server's new values, the migration row) of the acceptance."""
    now = timeutils.utcnow()
    source_host, source_node = source
    migration = {
        'instance_uuid': server.uuid,
        'migration_type': db_migrations.EVACUATION,
        'source_compute': source_host, 'source_node': source_node,
        'target_vm_state': target_vm_state(server.vm_state, stop_after)}
    service_history.history_record(
        context, source_host,
        'evacuate' if found is not None else 'evacuate-failed',
        [service_history.Change('server %s host' % server.uuid, server.host,
                                found.host if found is not None else None)],
        now=now)
    if found is None:
        migration.update(status=db_migrations.ERROR, dest_compute=host)
        row = db_migrations.migration_create(context, migration, now)
        if force:
            return {'task_state': None}, row
        instance_fault.record(context, server.uuid,
                              instance_fault.NO_VALID_HOST)
        return {'vm_state': operations.ERROR, 'task_state': None}, row
    migration.update(status=db_migrations.ACCEPTED, dest_compute=found.host,
                     dest_node=found.node)
    row = db_migrations.migration_create(context, migration, now)
    return {'host': found.host, 'node': found.node,
            'task_state': operations.REBUILDING}, row
