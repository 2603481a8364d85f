"""Evacuate a server from a host that is down, as Nova accepts it.

In one transaction (the server's instance action): the checks of Nova's
compute API in its order, the choice of a destination and the claim of
its node, the server's move to it (task_state ``rebuilding``), the
migration row and the action record. The destination's agent then
rebuilds the server there (:mod:`nova_forcedown.compute.tasks`) and the
source's agent, when it comes back, cleans up what was evacuated away.

Nova schedules after its answer; here the destination is chosen before
it, so a request with no valid host is still answered 200 (as in Nova)
but its migration is already ``error`` and, unless the host was forced,
the server in vm_state error, as Nova leaves it once its scheduler fails.
"""

from oslo_utils import timeutils

from nova_forcedown.db import engine as db_engine
from nova_forcedown.db import migrations as db_migrations
from nova_forcedown.db import service_history
from nova_forcedown import exception
from nova_forcedown.objects import instance_operations as operations
from nova_forcedown.objects import service as service_obj
from nova_forcedown.scheduler import host_selection

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


def evacuate(context, conf, is_up, seen, host=None, force=False,
             stop_after=False, project_id=None):
    """Accept the evacuation of a server; its migration row.

    ``seen`` is the server's record as its caller read it (and authorized
    the request against); the transaction reads it again, locked.

    ``host``: the destination asked for, checked by the scheduler unless
    ``force`` (2.1-2.28, or force at 2.29-2.67). ``is_up``: the
    servicegroup's liveness of a service record.

    What takes long is read before the transaction: the liveness of the
    server's host and the candidates, most free memory first. In it, the
    checks see the server as it is, and each candidate's claim its usage
    as it is, so the write lock (all of SQLite's) is held briefly.
    """
    # One read-only transaction (one connection) for all that.
    with db_engine.context_manager.reader.connection.using(context):
        services = _services(context, conf, seen, host)
        if host is not None and not _of_host(services, host):
            raise exception.ComputeHostNotFoundForEvacuation(host=host)
        source_up = any(is_up(service)
                        for service in _of_host(services, seen.host))
        choices = _choices(context, conf, is_up, seen, host, force,
                           services)
    migration = []

    def change(server, connection):
        if host == server.host:
            raise exception.EvacuationTargetIsSource()
        _check_state(server)
        if source_up or server.host != seen.host:
            raise exception.ComputeServiceInUse(host=server.host)
        source = _source(server, connection)
        found = _claimed(choices, server, connection)
        values, row = _accepted(context, server, source, found, host, force,
                                stop_after, connection)
        migration.append(row)
        return values

    operations.act(context, seen.uuid, change, 'evacuate', project_id)
    return migration[0]


def _check_state(server):
    """Nova's checks of an evacuation, but for a retry.

    A server still ``rebuilding`` may be evacuated again: its destination
    died before it rebuilt it (that host is down, or the evacuation is
    refused as still in use), and the operator retries elsewhere.
    """
    if server.task_state == operations.REBUILDING:
        server = server._replace(task_state=None)
    operations.check_state(server, 'evacuate', ALLOWED_VM_STATES)


def _source(server, connection):
    """(host, node) a new evacuation of ``server`` leaves from.

    Its host, unless it is a retry: the evacuations it supersedes fail
    (releasing their claim, as the server leaves their destination), and
    when their source has not cleaned up yet, the new one leaves from that
    source, whose force-up then still waits for its clean-up.
    """
    if server.task_state != operations.REBUILDING:
        return server.host, server.node
    superseded = db_migrations.migration_fail_open(connection, server.uuid)
    if not superseded:
        return server.host, server.node
    return superseded[-1].source_compute, superseded[-1].source_node


def _services(context, conf, server, host):
    """The compute services of the server's host and of its candidates."""
    hosts = host_selection.hosts_to_consider(context, conf, server, host)
    return service_obj.ServiceList.get_records(
        context, binary=service_obj.COMPUTE_BINARY,
        hosts=None if hosts is None else hosts + [server.host])


def _of_host(services, host):
    return [service for service in services if service.host == host]


def _choices(context, conf, is_up, server, host, force, services):
    """The Candidates to try, in order (a forced host: its node)."""
    if host is not None and force:
        nodes = db_migrations.node_capacities(context, [host])
        return [host_selection.capacity_of(node) for node in nodes[:1]]
    return host_selection.candidates(context, conf, is_up, server, services,
                                     host=host)


def _claimed(choices, server, connection):
    """The first choice the server fits on, its node claimed; or None.

    A forced destination is claimed as well: force skips the filters (up,
    enabled, zone), never the capacity, as Nova's conductor claims it.
    """
    for candidate in choices:
        if host_selection.claim(connection, candidate, server):
            return candidate
    return None


def _accepted(context, server, source, found, host, force, stop_after,
              connection):
    """(the server's new values, the migration row) of the acceptance."""
    now = timeutils.utcnow()
    source_host, source_node = source
    migration = {
        'instance_uuid': server.uuid,
        'migration_type': db_migrations.EVACUATION,
        'source_compute': source_host, 'source_node': source_node,
        'target_vm_state': target_vm_state(server.vm_state, stop_after)}
    service_history.history_record(
        connection, context, source_host,
        'evacuate' if found is not None else 'evacuate-failed',
        [service_history.Change('server %s host' % server.uuid, server.host,
                                found.host if found is not None else None)],
        now=now)
    if found is None:
        migration.update(status=db_migrations.ERROR, dest_compute=host)
        row = db_migrations.migration_create(connection, context, migration,
                                             now)
        if force:
            return {'task_state': None}, row
        return {'vm_state': operations.ERROR, 'task_state': None}, row
    migration.update(status=db_migrations.ACCEPTED, dest_compute=found.host,
                     dest_node=found.node)
    row = db_migrations.migration_create(connection, context, migration, now)
    return {'host': found.host, 'node': found.node,
            'task_state': operations.REBUILDING}, row
