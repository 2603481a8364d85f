"""nova-forcedown-monitor against simulated hosts whose BMCs speak IPMI.

A host dies as a machine does: its BMC switches it off (``ipmitool``,
the operator's tool, does it here), its agent's heartbeats stop and its
servers with them. The monitor, a real process, must fence it, force it
down and have every server run again on another host, exactly once;
and must leave alone a host whose agent alone died, a host whose BMC it
cannot read, and a zone that seems to fail all at once.
"""

import base64
import shutil
import signal
import socket
import time
import urllib.request
import uuid

import fixtures
import testtools

from nova_forcedown.compute.drivers import fake_bmc
from tests.fixtures import monitored_hosts
from tests.fixtures import processes
from tests.fixtures import rabbitmq
from tests.fixtures import redis_servers

# Who the monitor is to the API here: noauth2's administrator.
MONITOR_USER = 'admin'
# How the monitor's disabled_reason of a host it fenced starts.
FENCED = 'nova-forcedown-monitor: fenced'
# The history's event of the monitor's one write after a fence.
FENCED_DOWN = 'disable,force-down'


@testtools.skipIf(shutil.which('ipmitool') is None,
                  'ipmitool is not installed (apt-get install ipmitool)')
class MonitorTestCase(testtools.TestCase):

    racks = {'rack-a': 3, 'rack-b': 1}
    monitor_options = ''
    stuck = ()
    redfish = False

    def setUp(self):
        super().setUp()
        self.cloud = self.useFixture(monitored_hosts.MonitoredHosts(
            self.racks, self.monitor_options, self.more_config(),
            stuck=self.stuck, redfish=self.redfish))

    def more_config(self):
        return ''

    def power_off(self, host):
        result = self.cloud.ipmitool(host, 'chassis', 'power', 'off')
        self.assertEqual(0, result.returncode, result.stderr)

    def recover(self, host):
        """Start a monitor, kill ``host``, see it recovered; the monitor."""
        monitor = self.cloud.start_monitor()
        monitored_hosts.wait_for_log(monitor, 'Leading')
        self.power_off(host)
        self.assertEqual([host], self.cloud.wait_forced_down([host]))
        self.assertRecovered(host)
        return monitor

    def hang_with_a_fault(self, host, fault):
        """``host``'s agent dies while its BMC reports ``fault``."""
        monitor = self.cloud.start_monitor()
        monitored_hosts.wait_for_log(monitor, 'Leading')
        fake_bmc.write_faults(self.cloud.state_dir, host, fault)
        rack = self.cloud.rack_of(host)
        rack.agent.stop(signal.SIGKILL)
        return monitor

    def assertFencedForFault(self, host, monitor, said):
        """``host`` is fenced for its fault, and recovered."""
        self.assertEqual([host], self.cloud.wait_forced_down([host]))
        self.assertIn('Host %s has failed: its BMC says it is powered on '
                      'with a critical fault (%s) (judged in ' % (host, said),
                      monitor.output())
        # Its agent, started again, finds the host off: it runs nothing.
        self.cloud.restart_agent(self.cloud.rack_of(host))
        self.assertTrue(processes.wait_until(
            lambda: not self.cloud.guests()[host], timeout=60))
        self.assertRecovered(host)
        self.assertIn(FENCED, self.cloud.history(host))

    def assertRecovered(self, host):
        """Every server of the cloud runs once, none of them on ``host``."""
        def recovered():
            copies = self.cloud.running_copies()
            return len(copies) == self.cloud.servers and copies
        copies = processes.wait_until(recovered, timeout=60)
        self.assertTrue(copies, self.cloud.guests())
        for server, hosts in copies.items():
            self.assertEqual(1, len(hosts), (server, hosts))
            self.assertNotEqual(host, hosts[0])


class TestFenceReadiness(MonitorTestCase):
    """A host the monitor could not fence is named while it is up."""

    monitor_options = 'bmc_check_interval = 1'

    def test_a_host_it_could_not_fence_is_named_before_it_fails(self):
        # rack-b-1's BMC is away from the start; every host is up.
        rack = self.cloud.rack_of('rack-b-1')
        rack.bmcs.stop(signal.SIGKILL)
        monitor = self.cloud.start_monitor()
        output = monitored_hosts.wait_for_log(monitor, 'Fence drivers checked')
        self.assertIn('Fence drivers checked: 3 of 4 watched compute hosts '
                      'can be fenced', output)
        said = [line for line in output.splitlines()
                if 'cannot be fenced' in line]
        self.assertEqual(1, len(said), said)
        self.assertIn(' ERROR ', said[0])
        self.assertIn('Host rack-b-1 cannot be fenced: its BMC cannot be '
                      'read (IPMI 127.0.0.1:%d: no answer' % rack.bmc_port,
                      said[0])
        self.assertIn('fix its [monitor_host:rack-b-1] section', said[0])

        # Its BMC back, the next check (every second here) says so.
        self.cloud.restart_bmcs(rack)
        output = monitored_hosts.wait_for_log(
            monitor, 'Host rack-b-1 can be fenced again')
        self.assertEqual(1, output.count('cannot be fenced'))
        self.assertEqual([], self.cloud.forced_down())
        self.assertNotIn('Traceback', output)

    def test_an_operator_reads_each_hosts_power_as_the_monitor_would(self):
        self.cloud.rack_of('rack-b-1').bmcs.stop(signal.SIGKILL)
        self.power_off('rack-a-2')

        result = self.cloud.manage('host', 'fence-status')
        self.assertEqual(1, result.returncode, result.stderr)
        rows = {cells[0]: cells[1:] for cells in map(
            monitored_hosts.table_cells, result.stdout.splitlines()[3:-2])}
        said = rows['rack-b-1'].pop()
        self.assertEqual({
            'rack-a-1': ['ipmi', 'on', 'ok', ''],
            'rack-a-2': ['ipmi', 'off', 'ok', ''],
            'rack-a-3': ['ipmi', 'on', 'ok', ''],
            'rack-b-1': ['ipmi', '', '']}, rows)
        # pyghmi gives up a login without an answer after 4 to 6 s, the
        # driver at fence_timeout (5 s here): either says so.
        self.assertRegex(said, r'^its BMC cannot be read \(IPMI 127\.0\.0\.1:'
                         r'%d: no answer( within 5 s)?\)$' %
                         self.cloud.rack_of('rack-b-1').bmc_port)
        self.assertEqual('3 of 4 host(s) can be fenced.',
                         result.stdout.splitlines()[-1])

        result = self.cloud.manage('host', 'fence-status', 'rack-a-1')
        self.assertEqual(0, result.returncode, result.stderr)
        self.assertIn('1 of 1 host(s) can be fenced.', result.stdout)


class TestFenceReadinessOfNewHosts(MonitorTestCase):
    """A host that becomes watched is checked when first seen.

    Not at the next check, every five minutes by default.
    """

    monitor_options = 'bmc_check_interval = 300'

    def test_a_host_enabled_later_is_checked_when_first_seen(self):
        rack = self.cloud.rack_of('rack-b-1')
        self.cloud.manage('service', 'disable', 'rack-b-1')
        rack.bmcs.stop(signal.SIGKILL)
        monitor = self.cloud.start_monitor()
        output = monitored_hosts.wait_for_log(monitor, 'Fence drivers checked')
        self.assertIn('Fence drivers checked: 3 of 3 watched', output)

        self.cloud.manage('service', 'enable', 'rack-b-1')

        output = monitored_hosts.wait_for_log(monitor, 'newly watched')
        self.assertIn('Host rack-b-1 cannot be fenced: its BMC cannot be '
                      'read (IPMI 127.0.0.1:%d: no answer' % rack.bmc_port,
                      output)
        self.assertIn('Fence drivers checked for 1 newly watched compute '
                      'host(s) (rack-b-1): 0 can be fenced.', output)
        self.assertNotIn('Traceback', output)


class TestHostFailure(MonitorTestCase):

    def test_a_dead_host_is_fenced_forced_down_and_its_servers_run_again(
            self):
        monitor = self.cloud.start_monitor()
        monitored_hosts.wait_for_log(monitor, 'Leading')
        started = time.monotonic()
        self.power_off('rack-a-2')
        self.assertEqual(['rack-a-2'],
                         self.cloud.wait_forced_down(['rack-a-2']))
        forced_down_after = time.monotonic() - started
        self.assertRecovered('rack-a-2')
        # The operator's view: the history names the monitor for each
        # step, and the BMC still says off.
        history = self.cloud.history('rack-a-2')
        for event in (FENCED, 'force-down', 'mark-servers-shutdown',
                      'evacuate'):
            self.assertIn(event, history)
        self.assertIn(MONITOR_USER, history)
        status = self.cloud.ipmitool('rack-a-2', 'chassis', 'power',
                                     'status')
        self.assertIn('Chassis Power is off', status.stdout)
        self.assertLess(forced_down_after, 30, monitor.output())
        self.assertIn('Host rack-a-2 is fenced (found powered off) and '
                      'forced down, disabled, its 2 server(s) marked shut '
                      'down; 2 server(s) to evacuate.', monitor.output())
        row = self.cloud.services()['rack-a-2']
        self.assertEqual(('disabled', 'True'),
                         (row['Status'], row['Forced Down']))
        self.assertNotIn('Traceback', monitor.output())

    def test_an_agent_dead_alone_is_not_fenced(self):
        monitor = self.cloud.start_monitor()
        self.cloud.rack_of('rack-b-1').agent.stop(signal.SIGKILL)
        output = monitored_hosts.wait_for_log(monitor, 'its agent alone')
        self.assertIn('Host rack-b-1 is down: its BMC says it is powered on '
                      'and healthy: its agent alone is down', output)
        self.assertEqual([], self.cloud.forced_down())
        status = self.cloud.ipmitool('rack-b-1', 'chassis', 'power',
                                     'status')
        self.assertIn('Chassis Power is on', status.stdout)

    def test_a_host_down_with_a_power_fault_is_fenced(self):
        monitor = self.hang_with_a_fault('rack-b-1', 'main-power')
        self.assertFencedForFault('rack-b-1', monitor, 'Main Power Fault')
        # The operator's tool reads the same fault, and the power off.
        status = self.cloud.ipmitool('rack-b-1', 'chassis', 'status').stdout
        self.assertRegex(status, r'Main Power Fault\s+: true')
        self.assertRegex(status, r'System Power\s+: off')

    def test_a_fan_fault_alone_is_not_a_host_failure(self):
        monitor = self.hang_with_a_fault('rack-b-1', 'cooling')
        output = monitored_hosts.wait_for_log(monitor, 'its agent alone')
        self.assertIn('powered on with a warning fault (Cooling/Fan Fault): '
                      'its agent alone is down', output)
        self.assertEqual([], self.cloud.forced_down())

    def test_a_host_whose_bmc_cannot_be_read_is_not_fenced(self):
        rack = self.cloud.rack_of('rack-b-1')
        rack.bmcs.stop(signal.SIGKILL)
        monitor = self.cloud.start_monitor()
        rack.agent.stop(signal.SIGKILL)
        output = monitored_hosts.wait_for_log(
            monitor, 'Host rack-b-1 is down: its BMC cannot be read')
        self.assertEqual([], self.cloud.forced_down())
        self.assertNotIn('Traceback', output)

    def test_a_zone_failing_at_once_is_not_fenced(self):
        monitor = self.cloud.start_monitor()
        monitored_hosts.wait_for_log(monitor, 'Leading')
        # The rack's power distribution fails: its three hosts lose power
        # at the same instant (one ipmitool after another would space the
        # failures by its run time, and the first ones, within the limit,
        # would rightly be fenced).
        self.cloud.cut_power('rack-a-1', 'rack-a-2', 'rack-a-3')
        output = monitored_hosts.wait_for_log(
            monitor, 'Fencing none of zone nova: 3 of its 4 compute hosts '
                     'are down at once')
        self.assertIn('may be cut off from them. Down: rack-a-1, rack-a-2, '
                      'rack-a-3.', output)
        time.sleep(2)
        self.assertEqual([], self.cloud.forced_down())
        self.assertNotIn('fence', self.cloud.history('rack-a-1'))

        # Power back: the zone is within the limit again. One line said
        # it was held, one that it is no longer; nothing per host.
        for host in ('rack-a-1', 'rack-a-2', 'rack-a-3'):
            fake_bmc.write_power(self.cloud.state_dir, host, fake_bmc.ON)
        output = monitored_hosts.wait_for_log(
            monitor, 'Zone nova is within the fence-storm limit again')
        self.assertEqual(1, output.count('zone nova'), output)
        self.assertNotIn('Host rack-a-1 is down', output)
        self.assertEqual([], self.cloud.forced_down())


class TestTaggedOnly(MonitorTestCase):
    """[monitor] evacuate = tagged: Masakari's HA_Enabled=True metadata."""

    monitor_options = 'evacuate = tagged'

    def test_only_the_tagged_server_is_evacuated(self):
        tagged, untagged = self.cloud.server_uuids('rack-a-2')
        self.cloud.set_user_metadata(tagged, {'HA_Enabled': 'True'})
        monitor = self.cloud.start_monitor()
        monitored_hosts.wait_for_log(monitor, 'Leading')

        self.power_off('rack-a-2')

        def evacuated():
            copies = self.cloud.running_copies()
            moved = copies.get(tagged, ['rack-a-2']) != ['rack-a-2']
            return moved and copies
        copies = processes.wait_until(evacuated, timeout=60)
        self.assertTrue(copies, monitor.output())
        self.assertEqual(1, len(copies[tagged]), copies)
        self.assertNotIn(untagged, copies)
        self.assertIn('Host rack-a-2 is fenced (found powered off) and '
                      'forced down, disabled, its 2 server(s) marked shut '
                      'down; 1 server(s) to evacuate (tagged ones only: '
                      '[monitor] evacuate = tagged).', monitor.output())
        history = self.cloud.history('rack-a-2')
        self.assertIn('server %s host' % tagged, history)
        self.assertNotIn('server %s host' % untagged, history)


@testtools.skipIf(shutil.which('fence_ipmilan') is None,
                  'fence_ipmilan is not installed (apt-get install '
                  'fence-agents)')
class TestFenceAgent(MonitorTestCase):
    """The fence_agent driver, with ClusterLabs' own IPMI agent."""

    racks = {'rack-a': 2}
    monitor_options = ('fence_driver = fence_agent\n'
                       'fence_agent = fence_ipmilan\n'
                       'fence_agent_options = lanplus:1,cipher:3')

    def test_fence_ipmilan_fences_a_dead_host(self):
        monitor = self.cloud.start_monitor()
        monitored_hosts.wait_for_log(monitor, 'Leading')
        self.power_off('rack-a-1')
        self.assertEqual(['rack-a-1'],
                         self.cloud.wait_forced_down(['rack-a-1']))
        self.assertRecovered('rack-a-1')
        self.assertIn('fence', self.cloud.history('rack-a-1'))


class TestComingBack(MonitorTestCase):
    """After the recovery: the host switched on again, then forced up."""

    racks = {'rack-a': 3}

    def test_an_operator_switches_it_on_and_forces_it_up(self):
        self.recover('rack-a-2')
        result = self.cloud.manage('host', 'power-on', 'rack-a-2')
        self.assertEqual(0, result.returncode, result.stderr)
        self.assertIn('Host rack-a-2 is switched on', result.stdout)
        # Its agent boots it empty, cleans up and heartbeats: the
        # force-up guard then lets it up.
        self.assertTrue(processes.wait_until(lambda: self.cloud.manage(
            'service', 'force-down', 'rack-a-2', '--unset').returncode == 0,
            timeout=60))
        self.cloud.manage('service', 'enable', 'rack-a-2')
        self.assertTrue(processes.wait_until(
            lambda: self.cloud.api_states().get('rack-a-2') == 'up',
            timeout=30))
        self.assertIn('unfence', self.cloud.history('rack-a-2'))
        self.assertRecovered('rack-a-2')


class TestRestore(MonitorTestCase):

    racks = {'rack-a': 3}
    monitor_options = 'restore = true'

    def test_the_monitor_brings_it_back_by_itself(self):
        monitor = self.recover('rack-a-3')
        self.assertTrue(processes.wait_until(
            lambda: self.cloud.api_states().get('rack-a-3') == 'up',
            timeout=60))
        self.assertEqual([], self.cloud.forced_down())
        self.assertEqual('enabled',
                         self.cloud.services()['rack-a-3']['Status'])
        self.assertIn('clear-force-down', self.cloud.history('rack-a-3'))
        status = self.cloud.ipmitool('rack-a-3', 'chassis', 'power',
                                     'status')
        self.assertIn('Chassis Power is on', status.stdout)
        self.assertIn('Host rack-a-3 is back', monitor.output())
        # Back, it is watched again: a second failure is recovered too.
        self.power_off('rack-a-3')
        processes.wait_until(
            lambda: self.cloud.history('rack-a-3').count(FENCED_DOWN) == 2,
            timeout=60)
        self.assertRecovered('rack-a-3')


class TestRestoreIntoAFault(MonitorTestCase):
    """restore = true never switches on a host with a critical fault."""

    racks = {'rack-a': 2, 'rack-b': 1}
    monitor_options = 'restore = true'

    def test_a_host_fenced_for_a_power_fault_stays_off(self):
        monitor = self.hang_with_a_fault('rack-b-1', 'main-power')
        self.assertEqual(['rack-b-1'],
                         self.cloud.wait_forced_down(['rack-b-1']))
        # Its agent, started again, finds the host off: it runs nothing.
        self.cloud.restart_agent(self.cloud.rack_of('rack-b-1'))
        self.assertTrue(processes.wait_until(
            lambda: not self.cloud.guests()['rack-b-1'], timeout=60))
        self.assertRecovered('rack-b-1')
        output = monitored_hosts.wait_for_log(
            monitor, 'it is not switched back on: its BMC reports a '
                     'critical fault (Main Power Fault)')
        self.assertIn('it is not switched back on', output)
        time.sleep(2)
        self.assertIn('Chassis Power is off', self.cloud.ipmitool(
            'rack-b-1', 'chassis', 'power', 'status').stdout)
        self.assertEqual(['rack-b-1'], self.cloud.forced_down())


class TestPurgeDuringRecovery(MonitorTestCase):
    """db purge --all while servers wait their turn to be evacuated.

    The monitor's record of what it recovers is the host's service (forced
    down and disabled, its reason saying the monitor fenced it), which no
    purge removes: every server is evacuated.
    """

    racks = {'rack-a': (3, 3)}
    monitor_options = 'max_in_flight = 1'

    def test_every_server_is_still_evacuated(self):
        monitor = self.cloud.start_monitor()
        monitored_hosts.wait_for_log(monitor, 'Leading')
        self.power_off('rack-a-1')
        self.assertEqual(['rack-a-1'],
                         self.cloud.wait_forced_down(['rack-a-1']))
        result = self.cloud.manage('db', 'purge', '--all')
        self.assertEqual(0, result.returncode, result.stderr)
        self.assertRecovered('rack-a-1')


class TestPurgeWhileWaitingForRoom(MonitorTestCase):
    """db purge --all while a fenced host's servers wait for room.

    Their evacuations failed (no valid host) and are purged; the monitor
    knows from each server's fault that it waits for room.
    """

    racks = {'rack-a': (2, 2)}

    def test_they_are_evacuated_when_room_comes(self):
        # The only other host is disabled: no room for rack-a-1's servers.
        result = self.cloud.manage('service', 'disable', 'rack-a-2')
        self.assertEqual(0, result.returncode, result.stderr)
        monitor = self.cloud.start_monitor()
        monitored_hosts.wait_for_log(monitor, 'Leading')
        self.power_off('rack-a-1')
        monitored_hosts.wait_for_log(monitor, 'no host has room for it')
        result = self.cloud.manage('db', 'purge', '--all', '--verbose')
        self.assertEqual(0, result.returncode, result.stderr)
        # Their failed evacuations were purged.
        self.assertRegex(result.stdout, r'\| migrations +\| [1-9]')
        result = self.cloud.manage('service', 'enable', 'rack-a-2')
        self.assertEqual(0, result.returncode, result.stderr)
        self.assertRecovered('rack-a-1')


class TestHungBmc(MonitorTestCase):
    """A host whose BMC hangs beside a host that fails: each its own time.

    rack-b's BMCs stop answering (their process stopped) while rack-b-1's
    agent dies; then rack-a-2 loses its power. Each BMC call is bounded
    by fence_timeout (20 s here) and hosts are judged concurrently, so
    rack-a-2 is recovered in its own few seconds, not after rack-b-1's
    reads time out.
    """

    monitor_options = 'fence_timeout = 20'

    def test_the_failed_host_is_recovered_without_waiting(self):
        monitor = self.cloud.start_monitor()
        monitored_hosts.wait_for_log(monitor, 'Fence drivers checked')
        rack = self.cloud.rack_of('rack-b-1')
        rack.bmcs.process.send_signal(signal.SIGSTOP)
        self.addCleanup(rack.bmcs.process.send_signal, signal.SIGCONT)
        rack.agent.stop(signal.SIGKILL)
        # rack-b-1 is down on the API, its judgement under way.
        self.assertTrue(processes.wait_until(
            lambda: self.cloud.api_states().get('rack-b-1') == 'down',
            timeout=30))
        started = time.monotonic()
        self.cloud.cut_power('rack-a-2')
        self.assertEqual(['rack-a-2'],
                         self.cloud.wait_forced_down(['rack-a-2']))
        self.assertLess(time.monotonic() - started, 15, monitor.output())
        self.assertRecovered('rack-a-2')
        output = monitored_hosts.wait_for_log(
            monitor, 'Host rack-b-1 is down: its BMC cannot be read')
        self.assertIn('no answer within 20 s', output)
        self.assertEqual(['rack-a-2'], self.cloud.forced_down())


class TestFailedFence(MonitorTestCase):
    """A host that hangs powered on, whose BMC will not switch it off."""

    stuck = ('rack-b-1',)

    def more_config(self):
        # fence_timeout also bounds each BMC call: 3 s, as an IPMI
        # exchange with the simulated BMC can take over a second on a
        # loaded machine, and the test is about the power staying on.
        self.silent = self.useFixture(SilentAddress())
        return ('[monitor]\nconfirm_with = bmc,probe\n'
                'probe_port = %d\nprobe_timeout = 0.5\n'
                'fence_timeout = 3\nfence_retries = 1\n'
                '[monitor_host:rack-b-1]\nmanagement_address = 127.0.0.1\n'
                % self.silent.port)

    def test_it_is_neither_forced_down_nor_evacuated(self):
        monitor = self.cloud.start_monitor()
        monitored_hosts.wait_for_log(monitor, 'Leading')
        self.cloud.rack_of('rack-b-1').agent.stop(signal.SIGKILL)
        output = monitored_hosts.wait_for_log(monitor, 'its fence failed')
        self.assertIn('Host rack-b-1 has failed: its management address '
                      'does not answer and its BMC says it is powered on',
                      output)
        self.assertIn('still powered on after 3.0 s', output)
        self.assertEqual([], self.cloud.forced_down())
        self.assertNotIn('| evacuate ', self.cloud.history('rack-b-1'))


class SilentAddress(fixtures.Fixture):
    """A loopback port where a connection is neither made nor refused.

    Its listener's queue is full and never accepted from, so the kernel
    drops new connections' SYNs, as a host that hangs does.
    """

    def _setUp(self):
        self.listener = socket.socket()
        self.listener.bind(('127.0.0.1', 0))
        self.listener.listen(0)
        self.port = self.listener.getsockname()[1]
        self.addCleanup(self.listener.close)
        self.queued = []
        for _ in range(3):
            client = socket.socket()
            client.setblocking(False)
            client.connect_ex(('127.0.0.1', self.port))
            self.queued.append(client)
            self.addCleanup(client.close)
        time.sleep(0.2)


class TestReservedHost(MonitorTestCase):
    """Masakari's reserved_host: servers go to a host kept disabled.

    With add_reserved_host_to_aggregate, it joins the failed host's
    aggregates first.
    """

    racks = {'rack-a': 2, 'spare': (1, 0)}
    monitor_options = ('recovery_method = reserved_host\n'
                       'reserved_hosts = spare-1\n'
                       'add_reserved_host_to_aggregate = true')

    def _aggregate_with(self, name, host):
        aggregate = self.cloud.compute('POST', '/os-aggregates', {
            'aggregate': {'name': name}})['aggregate']
        self.cloud.compute('POST', '/os-aggregates/%s/action' %
                           aggregate['id'], {'add_host': {'host': host}})
        return aggregate['id']

    def _hosts_of(self, aggregate_id):
        return self.cloud.compute('GET', '/os-aggregates/%s' % aggregate_id)[
            'aggregate']['hosts']

    def test_servers_go_to_the_reserved_host_which_is_enabled(self):
        result = self.cloud.manage('service', 'disable', 'spare-1',
                                   '--reason', 'reserved for recovery')
        self.assertEqual(0, result.returncode, result.stderr)
        failed_hosts = self._aggregate_with('fast-disks', 'rack-a-1')
        others = self._aggregate_with('other-rack', 'rack-a-2')
        self.recover('rack-a-1')
        self.assertEqual(['rack-a-1', 'spare-1'],
                         sorted(self._hosts_of(failed_hosts)))
        self.assertEqual(['rack-a-2'], self._hosts_of(others))
        copies = self.cloud.running_copies()
        moved = [hosts[0] for hosts in copies.values()
                 if hosts[0] == 'spare-1']
        self.assertEqual(monitored_hosts.SERVERS_PER_HOST, len(moved))
        self.assertEqual('enabled',
                         self.cloud.services()['spare-1']['Status'])
        history = self.cloud.history('spare-1')
        self.assertIn('| enable ', history)
        self.assertIn(MONITOR_USER, history)


class TestRedfish(MonitorTestCase):
    """The redfish driver, to the same BMCs over Redfish (sushy)."""

    racks = {'rack-a': 2, 'rack-b': 1}
    redfish = True
    monitor_options = 'fence_driver = redfish\nredfish_scheme = http'

    def test_a_host_is_fenced_over_redfish(self):
        self.recover('rack-a-2')
        self.assertIn(FENCED, self.cloud.history('rack-a-2'))

    def test_a_host_down_and_critical_is_fenced(self):
        monitor = self.hang_with_a_fault('rack-b-1', 'power-control')
        self.assertFencedForFault('rack-b-1', monitor,
                                  'Health Critical, HealthRollup Critical')

    def test_one_bmc_over_redfish_and_ipmi(self):
        rack = self.cloud.rack_of('rack-a-1')
        request = urllib.request.Request(
            'http://127.0.0.1:%d/redfish/v1/Systems/rack-a-1/Actions/'
            'ComputerSystem.Reset' % rack.redfish_port,
            data=b'{"ResetType": "ForceOff"}', method='POST', headers={
                'Content-Type': 'application/json',
                'Authorization': 'Basic ' + base64.b64encode(
                    b'admin:password').decode()})
        with urllib.request.urlopen(request, timeout=10) as response:
            self.assertEqual(204, response.status)
        self.assertIn('Chassis Power is off', self.cloud.ipmitool(
            'rack-a-1', 'chassis', 'power', 'status').stdout)
        # The operator's power-on goes through the host's redfish driver.
        result = self.cloud.manage('host', 'power-on', 'rack-a-1')
        self.assertEqual(0, result.returncode, result.stderr)
        self.assertIn('Chassis Power is on', self.cloud.ipmitool(
            'rack-a-1', 'chassis', 'power', 'status').stdout)


class TestNotifications(MonitorTestCase):
    """What the monitor does, as a consumer of notifications sees it."""

    racks = {'rack-a': 3, 'rack-b': 1}

    def setUp(self):
        self.topic = 'nf_monitor_%s' % uuid.uuid4().hex
        super().setUp()
        rabbitmq.require_broker(self)
        self.addCleanup(rabbitmq.delete_queue, self.topic + '.info')

    def more_config(self):
        return ('[DEFAULT]\ntransport_url = rabbit://guest:guest@127.0.0.1:'
                '5672/\n[notifications]\nnotification_format = versioned\n'
                'versioned_notifications_topics = %s\n'
                '[oslo_messaging_notifications]\ndriver = messagingv2\n'
                % self.topic)

    def test_each_step_is_notified(self):
        listener = self.useFixture(processes.Process([
            processes.script('nova-forcedown-manage'), '--config-file',
            self.cloud.config, 'notifications', 'listen']))
        monitored_hosts.wait_for_log(listener, 'Listening')
        self.recover('rack-a-2')
        servers = monitored_hosts.SERVERS_PER_HOST
        processes.wait_until(lambda: listener.output().count(
            ' instance.evacuate ') == servers, timeout=30)
        events = _events(listener.output())
        [forced_down] = [data for event, data in events
                         if event == 'service.update' and
                         '"forced_down":true' in data]
        self.assertIn('"host":"rack-a-2"', forced_down)
        # Each server: marked shut down on the fenced host, then moved by
        # the monitor to its destination, rebuilding.
        for event in ('instance.power_off.end', 'instance.evacuate'):
            found = [data for name, data in events if name == event]
            self.assertEqual(servers, len(found), event)
            for data in found:
                self.assertIn('"action_initiator_user":"%s"'
                              % MONITOR_USER, data)
        for data in (data for name, data in events
                     if name == 'instance.evacuate'):
            self.assertIn('"task_state":"rebuilding"', data)
            self.assertNotIn('"host":"rack-a-2"', data)


def _events(listened):
    """[(event type, payload line)] of ``notifications listen``'s output."""
    lines = listened.splitlines()
    return [(header.split()[3], payload.strip())
            for header, payload in zip(lines, lines[1:])
            if payload.startswith('    ') and len(header.split()) > 3]


class TestMonitorFailover(MonitorTestCase):
    """Two monitors; the leader dies as the recovery starts."""

    monitor_options = 'max_in_flight = 1'

    def test_the_standby_goes_on_where_the_leader_stopped(self):
        first = self.cloud.start_monitor()
        monitored_hosts.wait_for_log(first, 'Leading')
        second = self.cloud.start_monitor()
        monitored_hosts.wait_for_log(second, 'Standing by')
        self.power_off('rack-a-1')
        self.assertEqual(['rack-a-1'],
                         self.cloud.wait_forced_down(['rack-a-1']))
        first.stop(signal.SIGKILL)
        monitored_hosts.wait_for_log(second, 'Leading')
        self.assertRecovered('rack-a-1')
        history = self.cloud.history('rack-a-1')
        # One fence and force-down, by whichever monitor led.
        self.assertEqual(1, history.count(FENCED_DOWN), history)


class ToozTestCase(MonitorTestCase):
    """Liveness in a Redis of the test's own, which the test can stop."""

    racks = {'rack-a': 4}

    def more_config(self):
        self.redis = self.useFixture(redis_servers.RedisServer())
        return ('[DEFAULT]\nservicegroup_driver = tooz\n'
                '[monitor]\npulse = true\n'
                '[coordination]\nbackend_url = %s\n'
                'database_report_interval = 2\n'
                % redis_servers.backend_url(self.redis.port, 'monitor'))


class TestToozLiveness(ToozTestCase):

    def test_a_dead_host_is_recovered(self):
        monitor = self.cloud.start_monitor()
        monitored_hosts.wait_for_log(monitor, 'Leading')
        self.power_off('rack-a-3')
        self.assertEqual(['rack-a-3'],
                         self.cloud.wait_forced_down(['rack-a-3']))
        self.assertRecovered('rack-a-3')

    def test_the_leader_lock_passes_within_the_leader_timeout(self):
        first = self.cloud.start_monitor()
        monitored_hosts.wait_for_log(first, 'Leading')
        second = self.cloud.start_monitor()
        monitored_hosts.wait_for_log(second, 'Standing by')
        first.stop(signal.SIGKILL)
        killed = time.monotonic()
        monitored_hosts.wait_for_log(second, 'Leading', timeout=30)
        # [monitor] leader_timeout (5 s) and a look (0.5 s), with slack.
        self.assertLess(time.monotonic() - killed, 10)


class TestBlindMonitor(ToozTestCase):
    """Redis away: the hosts' pulses cannot be read.

    The monitor, its lock kept in a file, must fence nothing meanwhile,
    whatever the compute API says.
    """

    monitor_options = 'coordination_url = file://$state_path/locks'

    def test_it_fences_nothing_until_it_sees_again(self):
        monitor = self.cloud.start_monitor()
        monitored_hosts.wait_for_log(monitor, 'Leading')
        self.redis.stop()
        self.power_off('rack-a-2')
        output = monitored_hosts.wait_for_log(
            monitor, 'pulses cannot be read')
        self.assertIn('Fencing nothing', output)
        time.sleep(6)
        self.assertEqual([], self.cloud.forced_down())
        self.redis.start()
        self.assertEqual(['rack-a-2'],
                         self.cloud.wait_forced_down(['rack-a-2']))
        self.assertRecovered('rack-a-2')
