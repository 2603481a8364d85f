"""The monitor protects a real OpenStack Nova 34 cloud.

One cloud for the class (tests/fixtures/real_nova.py): Keystone,
Placement, nova-api, conductor, scheduler and three nova-compute hosts on
Nova's fake virt driver; each host has a simulated BMC whose power-off
kills its nova-compute and its pulse (``nova-forcedown-pulse``, into a
Redis namespace of the class's own). The monitor is configured as an
operator of such a cloud configures it: Keystone password auth, the
compute endpoint from the catalog, the pulses, the BMCs over IPMI. Each
test leaves the cloud as it found it: every host on, up and enabled.

The same situations are tested against nova-forcedown's own API in
tests/functional/e2e/test_monitor.py and test_monitor_fresh_verdict.py.
"""

import shutil
import signal
import sys
import time

import fixtures
import testtools

from nova_forcedown.compute.drivers import fake_bmc
from nova_forcedown import conf as nf_conf
from nova_forcedown.monitor import compute_api
from nova_forcedown.monitor import leadership
from nova_forcedown.monitor import manager
from tests.fixtures import held_back
from tests.fixtures import monitored_hosts
from tests.fixtures import processes
from tests.fixtures import real_nova
from tests.fixtures import redis_servers

FENCED = 'nova-forcedown-monitor: fenced'
# Seconds a recovery may take here: the pulse's TTL, a look, the fence,
# Nova's rebuilds of a few servers on a loaded machine.
RECOVERY_TIMEOUT = 120


@testtools.skipIf(shutil.which('ipmitool') is None,
                  'ipmitool is not installed (apt-get install ipmitool)')
class TestMonitorOnNova(testtools.TestCase):
    """One class, so that one cloud serves every test."""

    @classmethod
    def setUpClass(cls):
        super().setUpClass()
        cls.pulses = redis_servers.RedisNamespace()
        cls.pulses.setUp()
        cls.addClassCleanup(cls.pulses.cleanUp)
        # compute3's BMC takes a power-off and does nothing: the failed
        # fence's host.
        cls.nova = real_nova.RealNova.start_for_class(
            cls, pulse_url=cls.pulses.url, stuck=('compute3',))

    def setUp(self):
        super().setUp()
        self.directory = self.useFixture(fixtures.TempDir()).path
        self.lock = self.useFixture(redis_servers.RedisServer())
        self.lock_url = redis_servers.backend_url(self.lock.port, 'lock')
        self.write_config()
        # Every host on, up and enabled again for the next test.
        self.addCleanup(self.nova.bring_back_all)

    def write_config(self, monitor_options='', bmc_ports=None):
        """The monitor's configuration; ``bmc_ports``: {host: port}."""
        self.config = processes.write_config(
            self.directory, self.nova.monitor_config(
                self.directory, self.pulses.url, lock_url=self.lock_url,
                monitor_options=monitor_options, bmc_ports=bmc_ports))

    def start_monitor(self):
        monitor = self.useFixture(processes.Process([
            processes.script('nova-forcedown-monitor'), '--config-file',
            self.config]))
        monitored_hosts.wait_for_log(monitor, 'Leading')
        return monitor

    def power_off(self, host):
        result = self.nova.ipmitool(host, 'chassis', 'power', 'off')
        self.assertEqual(0, result.returncode, result.stderr)

    def service(self, host):
        return self.nova.services()[host]

    def wait_forced_down(self, host, timeout=60):
        """Wait until Nova says ``host`` is forced down; its service."""
        return processes.wait_until(
            lambda: self.service(host)['forced_down'] and self.service(host),
            timeout=timeout, interval=0.2)

    def assertEvacuatedOnce(self, servers, host):
        """Each of ``servers`` ACTIVE on one other host, none on ``host``."""
        found = self.nova.wait_for_servers(
            servers, timeout=RECOVERY_TIMEOUT,
            condition=lambda server: self.nova.server_host(server) not in (
                host, None))
        self.assertEqual(set(servers), set(found))
        self.assertNotIn(host, {self.nova.server_host(server)
                                for server in found.values()})
        self.assertFalse(self.nova.compute_running(host))
        # One evacuation each: Nova would accept a second while the first
        # rebuilds, and the server would then run on two hosts.
        evacuations = self.nova.compute.get(
            '/os-migrations?migration_type=evacuation&source_compute=%s'
            % host, microversion='2.59').json()['migrations']
        self.assertEqual(sorted(servers), sorted(
            migration['instance_uuid'] for migration in evacuations
            if migration['instance_uuid'] in servers))

    def test_a_dead_host_is_fenced_forced_down_and_its_servers_run_again(
            self):
        servers = self.nova.boot_servers('compute1', count=3)
        monitor = self.start_monitor()
        started = time.monotonic()
        self.power_off('compute1')

        service = self.wait_forced_down('compute1')
        forced_down_after = time.monotonic() - started
        self.assertTrue(service, monitor.output())
        self.assertEqual('disabled', service['status'])
        self.assertTrue(service['disabled_reason'].startswith(FENCED),
                        service)
        self.assertEvacuatedOnce(servers, 'compute1')
        # The pulse saw it, not Nova's service_down_time (20 s here).
        self.assertLess(forced_down_after, real_nova.SERVICE_DOWN_TIME,
                        monitor.output())
        self.assertIn('Host compute1 is fenced (found powered off) and '
                      'forced down, disabled; 3 server(s) to evacuate.',
                      monitor.output())
        self.assertNotIn('Traceback', monitor.output())

    def test_a_nova_compute_death_alone_is_not_fenced(self):
        monitor = self.start_monitor()
        self.nova.kill_compute('compute2')
        output = monitored_hosts.wait_for_log(monitor, 'its agent alone')
        self.assertIn('Host compute2 is down: its BMC says it is powered on '
                      'and healthy: its agent alone is down', output)
        time.sleep(2)
        self.assertFalse(self.service('compute2')['forced_down'])
        self.assertEqual(fake_bmc.ON, self.nova.power('compute2'))

    def test_a_failed_fence_leaves_the_host_and_its_servers(self):
        servers = self.nova.boot_servers('compute3', count=1)
        monitor = self.start_monitor()
        # It hangs with a power fault: its BMC says critical, and will
        # not switch it off.
        fake_bmc.write_faults(self.nova.bmc_state_dir, 'compute3',
                              'main-power')
        self.addCleanup(fake_bmc.write_faults, self.nova.bmc_state_dir,
                        'compute3')
        self.nova.kill_compute('compute3')
        output = monitored_hosts.wait_for_log(monitor, 'its fence failed',
                                              timeout=RECOVERY_TIMEOUT)
        self.assertIn('its fence failed (still powered on after 5.0 s): '
                      'not forced down, its servers not evacuated', output)
        self.assertFalse(self.service('compute3')['forced_down'])
        self.assertEqual('compute3', self.nova.server_host(
            self.nova.servers()[servers[0]]))

    def test_a_hung_bmc_beside_a_failed_host_costs_it_nothing(self):
        """compute3's BMC hangs while compute1 fails: compute1 waits not."""
        hanging = self.useFixture(HangingBmc())
        # Two of the three hosts down at once: past the default
        # fence-storm limit (half a zone), which is raised for this one.
        self.write_config('fence_timeout = 20\n'
                          '[fencing]\nmax_forced_down_fraction = 0.7',
                          bmc_ports={'compute3': hanging.port})
        servers = self.nova.boot_servers('compute1', count=2)
        monitor = self.start_monitor()
        # The first check of the fence drivers opens compute3's session;
        # then its BMC stops answering, and its pulse. (Its nova-compute
        # runs on: Nova's scheduler may choose it for compute1's servers,
        # and would wait on a dead one for ever.)
        monitored_hosts.wait_for_log(monitor, 'Fence drivers checked')
        hanging.hang()
        self.nova.kill_pulse('compute3')
        time.sleep(3)
        started = time.monotonic()
        self.power_off('compute1')
        self.assertTrue(self.wait_forced_down('compute1'), monitor.output())
        self.assertLess(time.monotonic() - started, 15, monitor.output())
        self.assertEvacuatedOnce(servers, 'compute1')
        output = monitored_hosts.wait_for_log(
            monitor, 'Host compute3 is down: its BMC cannot be read')
        self.assertIn('no answer within 20 s', output)
        self.assertLess(output.index('Host compute1 is fenced'),
                        output.index('Host compute3 is down'))
        self.assertFalse(self.service('compute3')['forced_down'])

    # -------------------------------------------- a monitor that stalled

    STALLED_HOST = 'compute2'

    def stalled_monitor(self):
        """A monitor in this process, its looks driven by the test.

        Its first read of STALLED_HOST's BMC answers late, at a gate.
        """
        conf = nf_conf.make_conf(['--config-file', self.config])
        api = compute_api.from_conf(conf, compute_api.EVACUATE_ACTIVE_VERSION)
        leader = leadership.Leadership(
            self.lock_url, lifetime=conf.monitor.leader_timeout).start()
        self.addCleanup(leader.stop)
        self.gate = held_back.HeldBack()
        self.addCleanup(self.gate.opened.set)
        monitor = manager.Monitor(
            conf, api, leader,
            load=held_back.StalledBmcReads(self.STALLED_HOST, self.gate).load)
        self.addCleanup(monitor.stop, 5)
        self.assertTrue(processes.wait_until(leader.leads, timeout=30))
        return monitor

    def judged_and_stalled(self, monitor):
        """Switch the host off; let ``monitor`` judge it, then hold it."""
        self.power_off(self.STALLED_HOST)

        def look_until_held():
            monitor.tick()
            return self.gate.reached.wait(0.5)
        self.assertTrue(processes.wait_until(look_until_held, timeout=60))

    def resume(self, monitor):
        self.gate.opened.set()
        self.assertTrue(processes.wait_until(
            lambda: self.STALLED_HOST not in monitor._busy, timeout=60))

    def test_a_monitor_stalled_does_not_fence_a_host_switched_on(self):
        host = self.STALLED_HOST
        servers = self.nova.boot_servers(host, count=1)
        monitor = self.stalled_monitor()
        self.judged_and_stalled(monitor)
        # An operator switches it on; its nova-compute comes back.
        self.nova.set_power(host, fake_bmc.ON)
        self.nova.wait_for_states({host: 'up'}, timeout=120)

        self.resume(monitor)

        self.assertFalse(self.service(host)['forced_down'])
        self.assertEqual(fake_bmc.ON, self.nova.power(host))
        self.assertEqual(host, self.nova.server_host(
            self.nova.servers()[servers[0]]))

    def test_a_monitor_that_lost_its_lock_does_nothing_when_it_resumes(
            self):
        host = self.STALLED_HOST
        servers = self.nova.boot_servers(host, count=1)
        monitor = self.stalled_monitor()
        self.judged_and_stalled(monitor)
        # Its lock is lost (the backend restarts empty); a second
        # monitor, the real command, takes it and recovers the host.
        self.lock.stop()
        self.lock.start()
        second = self.start_monitor()
        self.assertTrue(self.wait_forced_down(host))
        self.assertEvacuatedOnce(servers, host)
        second.stop(signal.SIGTERM)
        # The operator brings the host back: on, up, enabled.
        self.nova.bring_back_all()
        moved_to = self.nova.server_host(self.nova.servers()[servers[0]])

        self.resume(monitor)

        service = self.service(host)
        self.assertEqual((False, 'enabled'),
                         (service['forced_down'], service['status']))
        self.assertEqual(fake_bmc.ON, self.nova.power(host))
        self.assertEqual(moved_to, self.nova.server_host(
            self.nova.servers()[servers[0]]))


class HangingBmc(fixtures.Fixture):
    """compute3's BMC in a process of its own, which the test can hang.

    A simulated BMC that answers until :meth:`hang` stops its process: a
    BMC that stops answering a session already open, the longest wait
    pyghmi knows (about 28 s without the driver's bound).
    """

    def _setUp(self):
        state_dir = self.useFixture(fixtures.TempDir()).path
        first = monitored_hosts.free_udp_ports(3)
        self.bmcs = self.useFixture(processes.Process([
            sys.executable, '-m', 'nova_forcedown.compute.drivers.fake_bmc',
            '--state-dir', state_dir, '--host-prefix', 'compute',
            '--hosts', '3', '--port', str(first),
            '--redfish-port', str(processes.free_port()),
            '--username', real_nova.BMC_USERNAME,
            '--password', real_nova.BMC_PASSWORD]))
        if not processes.wait_until(
                lambda: fake_bmc.SERVING in self.bmcs.output(), timeout=60):
            raise AssertionError(self.bmcs.output())
        self.port = first + 2
        self.addCleanup(self._go_on)

    def hang(self):
        self.bmcs.process.send_signal(signal.SIGSTOP)

    def _go_on(self):
        self.bmcs.process.send_signal(signal.SIGCONT)
