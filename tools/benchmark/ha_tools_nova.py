"""Masakari and Pacemaker's instance HA recovering a host of a real Nova.

    python -m tools.benchmark.ha_tools_nova [--runs 5] [--servers 10]
        [--tools masakari pacemaker]

The failure of monitor_nova, recovered by the two instance-HA tools
instead of nova-forcedown-monitor: one real OpenStack Nova 34 cloud per
run and tool (tests/fixtures/real_nova.py: three nova-compute hosts on
Nova's fake driver, report_interval 5 s, service_down_time 20 s, no
pulses), ``--servers`` servers booted onto compute1, compute1 switched off
through its BMC with ipmitool, and Nova's API read every 0.2 s for the
moments that count.

Neither tool can see the failure here: there is no Corosync, Pacemaker or
masakari-hostmonitor. Each tool's flow (this project's replays,
tests/fixtures/instance_ha.py, through python-novaclient at the tools'
microversions, a new Keystone session where the tool makes one) starts at
the power-off, as if its detection fired at once:

* Pacemaker: the power fence of the host (fence_ipmilan's status read of
  a host found off), fence_compute's off (forced down, disabled), then at
  once what NovaEvacuate's monitor runs: fence_evacuate status and off
  (``no_shared_storage``: Nova's fake driver keeps nothing on shared
  storage, and TripleO sets it by default).
* Masakari (recovery method auto, every option at its default): the host
  disabled, then instead of ``wait_period_after_service_update`` (180 s)
  a wait until Nova calls the host down, the shortest after which Nova
  takes an evacuation of a host that is not forced down; then its
  evacuations, three servers at a time, each followed every second.

Printed: the flows alone as measured here (p50 and p99 from the
power-off), then the same with each tool's detection and waits at their
documented defaults (:data:`DEFAULTS`, added to the measured figures: a
typical case, the detection's mean with the measured p50, and a worst
case, its maximum with the measured p99).
"""

import argparse
import json
import sys
import time

from keystoneauth1 import loading
from keystoneauth1 import session as ks_session
from novaclient import client as nova_client

from nova_forcedown import background
from tests.fixtures import instance_ha
from tests.fixtures import real_nova
from tools.benchmark import nova_host_failure

HOST = 'compute1'
TIMEOUT = nova_host_failure.TIMEOUT
TOOLS = ('masakari', 'pacemaker')

# Corosync's defaults (corosync.conf(5)): token 3000 ms, plus
# token_coefficient 650 ms for each node past two when the nodelist has
# three or more; consensus 1.2 x token. A node is out of the membership
# token + consensus after its last token: 8.03 s in a cluster of three.
_NODES = len(real_nova.HOSTS)
COROSYNC_MEMBERSHIP_S = round(1e-3 * (3000 + (_NODES - 2) * 650) * 2.2, 2)

# Each tool's detection (from the power-off to the start of its flow), as
# (least, mean, most) seconds, and its fixed waits, at their defaults.
DEFAULTS = {
    'masakari': {
        # The compute hosts form a Pacemaker/Corosync cluster; on each,
        # masakari-hostmonitor reads the cluster's node states every
        # [host] monitoring_interval (60 s; monitoring_samples 1) and
        # checks that the host is off with ipmitool (masakari-monitors,
        # masakarimonitors/conf/host.py, hostmonitor/host_handler/
        # handle_host.py).
        'detection_s': (COROSYNC_MEMBERSHIP_S,
                        COROSYNC_MEMBERSHIP_S + 30,
                        COROSYNC_MEMBERSHIP_S + 60),
        'detection': 'Corosync membership (token + consensus, %.2f s) '
                     'then masakari-hostmonitor reading the cluster every '
                     'monitoring_interval (60 s)' % COROSYNC_MEMBERSHIP_S,
        # masakari-engine sleeps wait_period_after_service_update (180 s)
        # after disabling the host (masakari/conf/engine.py,
        # engine/drivers/taskflow/host_failure.py), where the replay
        # waits only until Nova calls the host down.
        'wait_after_disable_s': 180,
    },
    'pacemaker': {
        # The compute hosts are Pacemaker Remote nodes of the controllers'
        # cluster: a connection lost without a word is seen by its
        # monitor (ocf:pacemaker:remote, interval 30 s, timeout 30 s;
        # pacemaker agents/ocf/remote.in): between one timeout and one
        # interval plus one timeout after the power-off.
        'detection_s': (30, 45, 60),
        'detection': 'the Pacemaker Remote connection monitor '
                     '(interval 30 s, timeout 30 s)',
        # fence_compute flags the node; NovaEvacuate's monitor (interval
        # 10 s, openstack-resource-agents ocf/NovaEvacuate) finds the flag
        # and runs fence_evacuate: between 0 and 10 s later.
        'evacuate_after_s': (0, 5, 10),
    },
}


def _arguments(argv):
    parser = argparse.ArgumentParser(prog='ha_tools_nova')
    parser.add_argument('--runs', type=int, default=5)
    parser.add_argument('--servers', type=int, default=10)
    parser.add_argument('--tools', nargs='+', choices=TOOLS,
                        default=list(TOOLS))
    return parser.parse_args(argv)


class Bench(nova_host_failure.HostFailure):

    def _setUp(self):
        self.nova = self.useFixture(real_nova.RealNova())

    def client(self, microversion):
        """A novaclient with a Keystone session of its own.

        As each of the tools' runs makes one: a run of a fence agent is a
        process, and Masakari makes one for each call.
        """
        nova = self.nova
        auth = loading.get_plugin_loader('password').load_from_options(
            auth_url=nova.auth_url, username=nova.username,
            password=nova.password, project_name=nova.project_name,
            user_domain_name=nova.user_domain_name,
            project_domain_name=nova.project_domain_name)
        return nova_client.Client(
            microversion, session=ks_session.Session(auth=auth),
            region_name=real_nova.REGION, endpoint_type='public')

    def failed_host(self, host, count):
        """Boot ``count`` servers onto ``host``, then switch it off."""
        servers = self.nova.boot_servers(host, count=count, timeout=TIMEOUT)
        self.nova.wait_for_states({host: 'up'}, timeout=TIMEOUT)
        self.power_off(host)
        return servers, time.monotonic()

    def pacemaker_run(self, host, count):
        """Seconds from the power-off to forced down and to all ACTIVE."""
        servers, started = self.failed_host(host, count)
        marks = {}

        def flow():
            # Level 1 of the node's fencing topology: fence_ipmilan finds
            # the host off with one status read, and is done.
            status = self.nova.ipmitool(host, 'chassis', 'power', 'status')
            if 'off' not in status.stdout:
                raise AssertionError('%s: %s' % (host, status.stdout))
            # Level 2: fence_compute, then NovaEvacuate at once.
            instance_ha.FenceCompute(self.client('2.11')).off(host)
            marks['fenced'] = time.monotonic() - started
            evacuation = instance_ha.nova_evacuate(
                lambda: self.client('2.11'), host, shared_storage=False)
            marks['evacuations_sent'] = time.monotonic() - started
            return evacuation

        call = background.Call(flow, 'pacemaker-flow')
        self.wait(lambda: _alive(call) and self.nova.services()[host][
            'forced_down'], 'the host forced down')
        forced_down = time.monotonic() - started
        self.wait(lambda: self.active_elsewhere(servers, host),
                  'its servers active elsewhere')
        all_active = time.monotonic() - started
        call.wait(TIMEOUT)
        evacuation = call.result()
        if evacuation is None or evacuation.refused:
            raise SystemExit('fence_evacuate: %s' % (evacuation,))
        return dict(marks, forced_down=forced_down, all_active=all_active)

    def masakari_run(self, host, count):
        """Seconds from the power-off to disabled, down and all ACTIVE."""
        servers, started = self.failed_host(host, count)
        marks = {}
        masakari = instance_ha.MasakariHostFailure(
            lambda: self.client('2.53'),
            wait_period_after_service_update=None)

        def flow():
            masakari.disable(host)
            marks['disabled_by_flow'] = time.monotonic() - started
            masakari.wait_after_disable(host)
            marks['wait_ended'] = time.monotonic() - started
            ids = [server.id for server in masakari.prepare(host)]
            marks['evacuations_started'] = time.monotonic() - started
            outcomes = masakari.evacuate_all(ids, host)
            marks['flow_ended'] = time.monotonic() - started
            return outcomes

        call = background.Call(flow, 'masakari-flow')
        self.wait(lambda: _alive(call) and self.nova.services()[host][
            'status'] == 'disabled', 'the host disabled')
        disabled = time.monotonic() - started
        self.wait(lambda: self.nova.services()[host]['state'] == 'down',
                  'Nova calling the host down')
        down = time.monotonic() - started
        self.wait(lambda: self.active_elsewhere(servers, host),
                  'its servers active elsewhere')
        all_active = time.monotonic() - started
        if not call.wait(TIMEOUT):
            raise SystemExit('the Masakari flow did not end')
        failed = {server: outcome for server, outcome in
                  call.result().items() if outcome != 'succeeded'}
        if failed:
            raise SystemExit('Masakari failed to recover: %s' % failed)
        return dict(marks, disabled=disabled, down=down,
                    all_active=all_active)


def _alive(call):
    """True, unless the flow ``call`` failed: then what it raised."""
    if call.wait(0):
        call.result()
    return True


def _with_defaults(tool, runs):
    """The figures with the tool's detection and waits at their defaults.

    (typical, worst): the detection's mean with the measured p50, its
    most with the measured p99.
    """
    defaults = DEFAULTS[tool]
    _, mean, most = defaults['detection_s']

    def both(values, typical_extra, worst_extra):
        measured = nova_host_failure.summary(values)
        return {'typical': round(mean + typical_extra + measured['p50'], 1),
                'worst': round(most + worst_extra + measured['p99'], 1)}

    if tool == 'pacemaker':
        _, wait_mean, wait_most = defaults['evacuate_after_s']
        return {
            'to_forced_down_s': both([run['forced_down'] for run in runs],
                                     0, 0),
            'to_all_active_s': both([run['all_active'] for run in runs],
                                    wait_mean, wait_most)}
    wait = defaults['wait_after_disable_s']
    return {
        'to_disabled_s': both([run['disabled'] for run in runs], 0, 0),
        # Masakari's fixed sleep replaces the replay's wait for Nova.
        'to_all_active_s': both([
            run['all_active'] - (run['wait_ended'] - run['disabled_by_flow'])
            for run in runs], wait, wait)}


def _measured(tool, runs):
    summary = nova_host_failure.summary
    names = {'pacemaker': ('forced_down', 'all_active', 'fenced',
                           'evacuations_sent'),
             # disabled_by_flow: when Nova answered the disable.
             'masakari': ('disabled', 'disabled_by_flow', 'down',
                          'all_active', 'evacuations_started',
                          'flow_ended')}[tool]
    figures = {'power_off_to_%s_s' % name: summary([run[name]
                                                    for run in runs])
               for name in names}
    # From the start of the tool's evacuation step: NovaEvacuate's run,
    # Masakari's listing of the host's servers once Nova calls it down.
    start = 'fenced' if tool == 'pacemaker' else 'wait_ended'
    figures['evacuation_step_to_all_active_s'] = summary(
        [run['all_active'] - run[start] for run in runs])
    return figures


def main(argv=None):
    args = _arguments(sys.argv[1:] if argv is None else argv)
    runs = {tool: [] for tool in args.tools}
    for number in range(args.runs):
        for tool in args.tools:
            measure = getattr(Bench, '%s_run' % tool)
            runs[tool].append(nova_host_failure.in_a_cloud(
                Bench, lambda bench: measure(bench, HOST, args.servers)))
            said = ', '.join('%s %.2f s' % item for item in sorted(
                runs[tool][-1].items(), key=lambda item: item[1]))
            print('run %d %s: %s' % (number + 1, tool, said),
                  file=sys.stderr, flush=True)
    print(json.dumps({
        'servers': args.servers, 'runs': args.runs,
        'nova_report_interval_s': real_nova.REPORT_INTERVAL,
        'nova_service_down_time_s': real_nova.SERVICE_DOWN_TIME,
        'flow_alone': {tool: _measured(tool, tool_runs)
                       for tool, tool_runs in runs.items()},
        'with_default_detection_and_waits': {
            tool: dict(_with_defaults(tool, tool_runs),
                       detection=DEFAULTS[tool]['detection'],
                       detection_least_mean_most_s=DEFAULTS[tool][
                           'detection_s'])
            for tool, tool_runs in runs.items()},
        'corosync_membership_s': COROSYNC_MEMBERSHIP_S,
        'each_run': {tool: [{name: round(value, 2)
                             for name, value in run.items()}
                            for run in tool_runs]
                     for tool, tool_runs in runs.items()},
    }, indent=2))
    return 0


if __name__ == '__main__':
    sys.exit(main())
