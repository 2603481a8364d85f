"""Recover a fenced host: force it down, then evacuate its servers.

Each step goes through the operations the API uses, with the monitor as
the actor: the force-down (with the fence-storm guard) marks the host's
servers shut down in its transaction, as the host-wide mark-shutdown does;
each evacuation is the API's, destination chosen by the scheduler. What
is left to do is read from the database every time, so a monitor that
takes over from one that died goes on where it stopped, and nothing is
done twice: a server evacuated has left the host.
"""

from nova_forcedown import context as nf_context
from nova_forcedown import exception
from nova_forcedown.conf import monitor as monitor_conf
from nova_forcedown.objects import evacuation
from nova_forcedown.objects import instance as instance_obj
from nova_forcedown.objects import instance_operations as operations
from nova_forcedown.objects import migration as migration_obj
from nova_forcedown.objects import service as service_obj
from nova_forcedown.objects import service_history
from nova_forcedown.scheduler import host_selection

# Who the history and the instance actions name for the monitor's steps.
MONITOR_USER = 'nova-forcedown-monitor'

FENCE_EVENT = 'fence'
UNFENCE_EVENT = 'unfence'
FORCE_DOWN_EVENTS = ('force-down', 'clear-force-down')

# The servers an evacuation of the monitor starts from: a server in error
# (its evacuation found no host, or its rebuild failed) waits for an
# operator, not for the next look.
EVACUATED_VM_STATES = (operations.ACTIVE, operations.STOPPED)

# Values of HA_Enabled and evacuable that tag a server.
_TRUE = ('true', '1', 'yes', 'on')


def monitor_context():
    return nf_context.RequestContext(user_id=MONITOR_USER, project_id=None,
                                     is_admin=True, roles=['admin'],
                                     overwrite=False)


def record_fence(context, host, already_off):
    """The fence in the host's history: it was switched off, or found off."""
    service_history.record(context, host, FENCE_EVENT, [service_history.Change(
        'power', 'off' if already_off else 'on', 'off')])


def record_unfence(context, host):
    """The host switched back on, in its history."""
    service_history.record(context, host, UNFENCE_EVENT, [
        service_history.Change('power', 'off', 'on')])


def force_up(context, conf, host):
    """Clear ``host``'s force-down; the force-up guard may refuse."""
    return service_obj.Service.update_compute(
        context, {'forced_down': False}, host=host, conf=conf)


def force_down(context, conf, host):
    """Force ``host`` down, its servers marked shut down; the service.

    Refused over the fence-storm limit (ForcedDownLimitExceeded).
    """
    return service_obj.Service.update_compute(
        context, {'forced_down': True}, host=host, conf=conf,
        mark_shutdown=True)


def recovering(context, services):
    """Hosts of ``services`` forced down by the monitor, not forced up."""
    hosts = []
    for service in services:
        if not service.forced_down:
            continue
        entry = service_history.latest_of(context, service.host,
                                          FORCE_DOWN_EVENTS)
        if (entry is not None and entry.user_id == MONITOR_USER and
                'clear-force-down' not in entry.event.split(',')):
            hosts.append(service.host)
    return hosts


def under_way(context, hosts):
    """Evacuations away from ``hosts`` accepted and not yet rebuilt."""
    return sum(migration_obj.evacuations_under_way(context, host)
               for host in hosts)


def left_on(context, conf, host):
    """Servers of ``host`` that the monitor evacuates, oldest first."""
    servers = instance_obj.get_records(
        context, instance_obj.filters(
            exact={'host': host}, vm_states=list(EVACUATED_VM_STATES),
            task_states=[None]),
        sort=(('created_at', 'asc'), ('id', 'asc')))
    if conf.monitor.evacuate == monitor_conf.EVACUATE_TAGGED:
        servers = [server for server in servers if tagged(server)]
    return servers


def tagged(server):
    """Whether the server asks to be evacuated, as the HA tools tag it.

    Masakari's metadata HA_Enabled=True, or the flavor extra spec
    evacuable=true of fence_evacuate and NovaEvacuate.
    """
    metadata = server.user_metadata or {}
    specs = (server.flavor or {}).get('extra_specs') or {}
    return (str(metadata.get('HA_Enabled', '')).lower() in _TRUE or
            str(specs.get('evacuable', '')).lower() in _TRUE)


def destinations(conf):
    """The destinations to try, in [monitor] recovery_method's order.

    None for the scheduler's choice, else a reserved host's name.
    """
    reserved = list(conf.monitor.reserved_hosts)
    return {monitor_conf.AUTO: [None],
            monitor_conf.RESERVED_HOST: reserved,
            monitor_conf.AUTO_PRIORITY: [None] + reserved,
            monitor_conf.RH_PRIORITY: reserved + [None],
            }[conf.monitor.recovery_method]


def evacuate(context, conf, servicegroup, server):
    """Evacuate ``server`` to the first destination with room.

    Returns its migration, or None when no destination has room (the
    server stays, for a later look: it is never sent to error for want
    of a host). A reserved host is enabled first, as Masakari enables it.
    A refusal (the server changed meanwhile) is a domain error the caller
    reports.
    """
    for host in destinations(conf):
        plan = _plan(context, conf, servicegroup, server, host)
        if plan is None or not plan.choices:
            continue
        if host is not None:
            _enable(context, conf, host)
        return evacuation.evacuate(context, plan, server, host=host,
                                   force=host is not None)
    return None


def _plan(context, conf, servicegroup, server, host):
    """The plan to ``host``: the scheduler's choice when None."""
    if host is None:
        return host_selection.evacuation_plan(context, conf, servicegroup,
                                              server)
    return host_selection.reserved_host_plan(context, servicegroup, server,
                                             host)


def _enable(context, conf, host):
    service = service_obj.Service.get_by_host_and_binary(
        context, host, service_obj.COMPUTE_BINARY)
    if service.disabled:
        service_obj.Service.update_compute(
            context, {'disabled': False, 'disabled_reason': None},
            host=host, conf=conf)


REFUSALS = (exception.Conflict, exception.Invalid, exception.NotFound)
