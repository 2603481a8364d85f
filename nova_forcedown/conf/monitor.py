"""[monitor] options, and one [monitor_host:NAME] section per fenced host.

The fault monitor (``nova-forcedown-monitor``) reads ``[monitor]`` for how
it decides and recovers, and for each host it may fence a section named
after the host, ``[monitor_host:compute-1]``, with the host's BMC and
management address. A host option left out takes the ``[monitor]`` option
of the same name, so credentials shared by every BMC are written once.
"""

import collections

from oslo_config import cfg
from oslo_config import types

GROUP = 'monitor'
HOST_GROUP_PREFIX = 'monitor_host:'
# How the configuration reference names the sections.
HOST_GROUP_TEMPLATE = HOST_GROUP_PREFIX + 'hostname'

# How the monitor confirms that a host whose service is down has failed.
BMC = 'bmc'
PROBE = 'probe'

# Which servers of a failed host it evacuates.
EVACUATE_ALL = 'all'
EVACUATE_TAGGED = 'tagged'

# Where they go, in Masakari's words: any valid host, reserved hosts only,
# or one first and the other when it has no room.
AUTO = 'auto'
RESERVED_HOST = 'reserved_host'
AUTO_PRIORITY = 'auto_priority'
RH_PRIORITY = 'rh_priority'

# What an evacuated server ends as.
EVACUATED_ACTIVE = 'active'
EVACUATED_STOPPED = 'stopped'

# The fraction of a zone it fences at most when [fencing]
# max_forced_down_fraction is unset.
DEFAULT_MAX_FAILED_FRACTION = 0.5

MONITOR_OPTS = [
    cfg.FloatOpt('interval', default=1.0, min=0.1,
                 help='Seconds between two looks at the compute services '
                      'and the pulses. A failure is seen within the '
                      'pulse\'s TTL (with pulse = true) or the target\'s '
                      'service_down_time, plus this interval.'),
    cfg.BoolOpt('pulse', default=False,
                help='Read the compute hosts\' pulses from the coordination '
                     'backend ([coordination] backend_url): a host whose '
                     'pulse is gone is a suspect at once, without waiting '
                     'for the compute API to call its service down (Nova '
                     'does after service_down_time, 60 s by default). Each '
                     'compute host then runs nova-forcedown-pulse (or this '
                     'project\'s agent on the tooz servicegroup driver). '
                     'Off: the compute API\'s service states alone.'),
    cfg.StrOpt('evacuated_state', default=EVACUATED_ACTIVE,
               choices=((EVACUATED_ACTIVE,
                         'evacuate at microversion 2.94: a server that was '
                         'active runs again on its new host'),
                        (EVACUATED_STOPPED,
                         'evacuate at microversion 2.95: Nova leaves every '
                         'evacuated server stopped on its new host, for its '
                         'owner to start')),
               help='What an evacuated server ends as.'),
    cfg.IntOpt('evacuation_retries', default=3, min=0,
               help='Evacuations of a server tried again after one failed '
                    '(no valid host, a rebuild that failed), each to the '
                    'next destination of recovery_method; past them the '
                    'server is left in error for an operator.'),
    cfg.ListOpt('confirm_with', default=[BMC],
                item_type=types.String(choices=(BMC, PROBE)),
                help='The second channels that must confirm a failure '
                     'before the monitor fences: "bmc" (the host\'s BMC '
                     'says it is powered off, or powered on with a '
                     'critical fault: a main power, power control or '
                     'power overload fault in IPMI\'s chassis status, '
                     'Health or HealthRollup Critical in Redfish) and '
                     '"probe" (its management address does not answer a '
                     'TCP connection, while its BMC can still be read). A '
                     'host whose management address answers is never '
                     'fenced: its agent alone is down. With "bmc" alone, '
                     'a host that hangs powered on and healthy is not '
                     'fenced; add "probe" to fence it.'),
    cfg.PortOpt('probe_port', default=22,
                help='TCP port of the management address that the probe '
                     'connects to; a refused connection still means the '
                     'host answers.'),
    cfg.FloatOpt('probe_timeout', default=1.0, min=0.1,
                 help='Seconds the probe waits for an answer.'),
    cfg.StrOpt('fence_driver', default='ipmi',
               help='How hosts are fenced, unless their section says '
                    'otherwise: "ipmi" (IPMI 2.0 over LAN with pyghmi), '
                    '"redfish" (Redfish with sushy) or "fence_agent" (a '
                    'ClusterLabs fence agent command, such as '
                    'fence_ipmilan).'),
    cfg.PortOpt('bmc_port',
                help='Port of the hosts\' BMCs. Unset: 623 (UDP) for '
                     'IPMI, 443 (TCP) for Redfish.'),
    cfg.StrOpt('bmc_username',
               help='User name on the hosts\' BMCs.'),
    cfg.StrOpt('bmc_password', secret=True,
               help='Password on the hosts\' BMCs.'),
    cfg.StrOpt('redfish_scheme', default='https', choices=('https', 'http'),
               help='How the redfish driver reaches the BMCs.'),
    cfg.BoolOpt('redfish_verify', default=True,
                help='Whether the redfish driver verifies the BMCs\' '
                     'certificates (against the system\'s CAs).'),
    cfg.StrOpt('fence_agent',
               help='The fence agent command of the fence_agent driver, '
                    'e.g. fence_ipmilan. It gets the standard arguments on '
                    'its standard input: action, ip, ipport, username, '
                    'password and fence_agent_options.'),
    cfg.DictOpt('fence_agent_options', default={},
                help='More arguments for the fence agent, e.g. '
                     'lanplus:1,cipher:3.'),
    cfg.FloatOpt('fence_timeout', default=30.0, min=1.0,
                 help='Seconds a power-off has to be confirmed by the BMC '
                      'before it is tried again.'),
    cfg.IntOpt('fence_retries', default=2, min=0,
               help='Power-offs tried again after the first before the '
                    'fence is reported failed; a host not confirmed off is '
                    'never forced down nor evacuated.'),
    cfg.StrOpt('evacuate', default=EVACUATE_ALL,
               choices=((EVACUATE_ALL, 'every server of the failed host'),
                        (EVACUATE_TAGGED,
                         'only servers whose metadata says HA_Enabled=True '
                         'or whose flavor has the extra spec '
                         'evacuable=true, as Masakari and fence_evacuate '
                         'tag them')),
               help='Which servers of a failed host are evacuated.'),
    cfg.StrOpt('recovery_method', default=AUTO,
               choices=((AUTO, 'any host the scheduler chooses'),
                        (RESERVED_HOST, 'only the reserved_hosts'),
                        (AUTO_PRIORITY, 'any host, else a reserved one'),
                        (RH_PRIORITY, 'a reserved host, else any')),
               help='Where evacuated servers go, as Masakari\'s recovery '
                    'methods say. A reserved host is enabled (and recorded '
                    'so) when the first server is evacuated onto it.'),
    cfg.ListOpt('reserved_hosts', default=[],
                help='Compute hosts kept for recovery, in the order they '
                     'are filled. Keep their services disabled so that '
                     'they take no new servers; the monitor enables one '
                     'when it needs it. A reserved host that is down, '
                     'forced down or full is passed over.'),
    cfg.BoolOpt('add_reserved_host_to_aggregate', default=False,
                help='Before servers go to a reserved host, add it to every '
                     'host aggregate the failed host is in (as Masakari\'s '
                     'option of the same name does), so that what the '
                     'aggregates give those servers (their zone, their '
                     'filters) holds on the reserved host.'),
    cfg.IntOpt('bmc_check_interval', default=300, min=0,
               help='Seconds between two checks that the leading monitor '
                    'can read the power of every watched compute host '
                    'through its fence driver, as Pacemaker monitors a '
                    'fence device: a host it could not fence (a wrong '
                    'password or address, a BMC away) is named in the log '
                    'before it fails, not when it has. The first check '
                    'comes as the monitor starts leading, and a host that '
                    'becomes watched in between (new, enabled or forced up '
                    'again) is checked when first seen. 0: never.'),
    cfg.IntOpt('max_in_flight', default=10, min=1,
               help='Evacuations the monitor keeps under way at once, over '
                    'every host it recovers; the rest wait their turn.'),
    cfg.BoolOpt('restore', default=False,
                help='Bring a recovered host back by itself: switch it on '
                     'once none of its servers is left to evacuate or '
                     'being rebuilt elsewhere (never while its BMC reports '
                     'a critical fault), then clear its force-down and '
                     'enable it once its compute service runs again (its '
                     'pulse, or its service\'s updated_at moving) and the '
                     'compute API\'s force-up guard agrees (its evacuations '
                     'cleaned up). Off (the default): an operator does '
                     'both, switching it on through its BMC, then '
                     '"openstack compute service set --up --enable HOST '
                     'nova-compute", once the host is repaired.'),
    cfg.StrOpt('coordination_url', secret=True,
               help='tooz URL of the lock that elects the one monitor that '
                    'acts when several run. Unset: [coordination] '
                    'backend_url with pulse = true or the tooz servicegroup '
                    'driver, else a '
                    'file lock under state_path (monitors on one machine '
                    'only).'),
    cfg.IntOpt('leader_timeout', default=5, min=1,
               help='Seconds after which a leading monitor that stopped '
                    'renewing its lock (it died) loses it to another (on '
                    'Redis: the lock\'s lock_timeout).'),
]

HOST_OPTS = [
    cfg.StrOpt('fence_driver', help='[monitor] fence_driver, for this host.'),
    cfg.HostAddressOpt('bmc_address',
                       help='Address of the host\'s BMC. Without it the '
                            'host is never fenced.'),
    cfg.PortOpt('bmc_port', help='[monitor] bmc_port, for this host.'),
    cfg.StrOpt('bmc_username', help='[monitor] bmc_username, for this host.'),
    cfg.StrOpt('bmc_password', secret=True,
               help='[monitor] bmc_password, for this host.'),
    cfg.StrOpt('redfish_system',
               help='Path of the host\'s system on its BMC, e.g. '
                    '/redfish/v1/Systems/1 (redfish driver). Unset: the '
                    'only system the BMC has.'),
    cfg.StrOpt('redfish_scheme', choices=('https', 'http'),
               help='[monitor] redfish_scheme, for this host.'),
    cfg.BoolOpt('redfish_verify',
                help='[monitor] redfish_verify, for this host.'),
    cfg.HostAddressOpt('management_address',
                       help='Address the probe connects to (confirm_with '
                            'probe).'),
    cfg.StrOpt('fence_agent', help='[monitor] fence_agent, for this host.'),
    cfg.DictOpt('fence_agent_options',
                help='[monitor] fence_agent_options, for this host.'),
]

# What the monitor knows of one host, its own section over [monitor].
HostSettings = collections.namedtuple('HostSettings', (
    'host', 'fence_driver', 'bmc_address', 'bmc_port', 'bmc_username',
    'bmc_password', 'management_address', 'fence_agent',
    'fence_agent_options', 'redfish_system', 'redfish_scheme',
    'redfish_verify'))


def register_opts(conf):
    conf.register_opts(MONITOR_OPTS, group=GROUP)


def register_host_sections(conf):
    """Register HOST_OPTS in each [monitor_host:NAME] of the files read.

    Returns the sections' names.
    """
    sections = [section for section in conf.list_all_sections()
                if section.startswith(HOST_GROUP_PREFIX)]
    for section in sections:
        conf.register_opts(HOST_OPTS, group=section)
    return sections


def host_settings(conf, host):
    """The :class:`HostSettings` of ``host``."""
    group = HOST_GROUP_PREFIX + host
    own = conf[group] if group in conf else None
    values = {}
    for name in HostSettings._fields[1:]:
        value = getattr(own, name, None) if own is not None else None
        if value is None:
            value = getattr(conf.monitor, name, None)
        values[name] = value
    return HostSettings(host=host, **values)


def list_opts():
    return {GROUP: MONITOR_OPTS, HOST_GROUP_TEMPLATE: HOST_OPTS}
