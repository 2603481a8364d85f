"""Recovery policy: which hosts the monitor recovers, which servers, where.

What the monitor is doing lives in the target itself, where no purge
removes it while a recovery is open: a host it fenced is forced down and
disabled with a reason that starts with :data:`FENCED_MARK` (as Masakari
disables the hosts it recovers), and the evacuations it started are the
target's migrations away from that host. A monitor that takes over from
one that died reads both and goes on where it stopped; nothing is done
twice, since a server being evacuated has a task and a server evacuated
has left the host. An operator who enables the host or clears its
force-down takes it back from the monitor.
"""

import datetime

from nova_forcedown.conf import monitor as monitor_conf
from nova_forcedown.monitor import compute_api

# How the monitor's disabled_reason starts: whose the recovery is.
FENCED_MARK = 'nova-forcedown-monitor: fenced'

# Server statuses an evacuation of the monitor starts from; a server in
# error waits for an operator, unless its last evacuation failed.
EVACUATED_STATUSES = ('ACTIVE', 'SHUTOFF')
ERROR = 'ERROR'

# How a server's fault says that its evacuation found no host with room:
# it waits for room, tried again without a bound (see to_evacuate).
NO_VALID_HOST = 'No valid host'

# Values of HA_Enabled and evacuable that tag a server.
_TRUE = ('true', '1', 'yes', 'on')


def fenced_reason(already_off, now=None):
    """The disabled_reason of a host the monitor fenced."""
    now = now or datetime.datetime.now(datetime.timezone.utc)
    return '%s (%s) at %s' % (
        FENCED_MARK, 'found powered off' if already_off else 'powered off',
        now.strftime('%Y-%m-%dT%H:%M:%SZ'))


def recovering(services):
    """Those of ``services`` that the monitor fenced and still recovers."""
    return [service for service in services
            if service.forced_down and service.disabled and
            (service.disabled_reason or '').startswith(FENCED_MARK)]


def under_way(migrations):
    """How many of ``migrations`` are evacuations not yet over."""
    return sum(1 for migration in migrations
               if migration.status not in compute_api.MIGRATION_ENDED)


def failures(migrations, server_id):
    """How many evacuations of ``server_id`` among ``migrations`` failed."""
    return sum(1 for migration in migrations
               if migration.instance_uuid == server_id and
               migration.status in compute_api.MIGRATION_FAILED)


def to_evacuate(conf, servers, migrations):
    """The servers of a fenced host to evacuate now, oldest first.

    Those with no task and no evacuation under way (in ``migrations``),
    active or stopped, or in error after a
    failed evacuation: one that found no host with room waits for room
    (tried again however often, :func:`waits_for_room`, read from the
    server's fault, which no purge of the evacuations removes), another
    failure is tried again ``[monitor] evacuation_retries`` times. With
    ``[monitor] evacuate = tagged``, the tagged ones only.
    """
    chosen = []
    moving = {migration.instance_uuid for migration in migrations
              if migration.status not in compute_api.MIGRATION_ENDED}
    for server in servers:
        # A server whose evacuation is under way is never evacuated
        # again, whatever its task says: Nova 34 was seen listing one on
        # its source, with no task, while its destination rebuilt it.
        if server.task_state is not None or server.id in moving:
            continue
        if server.status == ERROR:
            failed = failures(migrations, server.id)
            if not waits_for_room(server) and (
                    not failed or failed > conf.monitor.evacuation_retries):
                continue
        elif server.status not in EVACUATED_STATUSES:
            continue
        if (conf.monitor.evacuate == monitor_conf.EVACUATE_TAGGED and
                not tagged(server)):
            continue
        chosen.append(server)
    return chosen


def waits_for_room(server):
    """Whether the server's last evacuation found no host with room."""
    return (server.status == ERROR and
            (server.fault or '').startswith(NO_VALID_HOST))


def given_up(conf, servers, migrations):
    """Servers whose evacuations failed more often than retried."""
    return [server for server in servers
            if server.status == ERROR and server.task_state is None and
            not waits_for_room(server) and
            failures(migrations, server.id) >
            conf.monitor.evacuation_retries]


def tagged(server):
    """Whether the server asks to be evacuated, as the HA tools tag it.

    Masakari's metadata HA_Enabled=True, or the flavor extra spec
    evacuable=true of fence_evacuate and NovaEvacuate.
    """
    return (str(server.metadata.get('HA_Enabled', '')).lower() in _TRUE or
            str(server.extra_specs.get('evacuable', '')).lower() in _TRUE)


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


def reserved_usable(service):
    """Whether a reserved host can take servers: up and not forced down."""
    return service is not None and service.up and not service.forced_down
