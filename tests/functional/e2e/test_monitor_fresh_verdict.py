"""Only a fresh verdict acts: a monitor that stalled after judging a host.

A monitor reads "powered off" from a host's BMC, then stalls (a pause, a
partition, a slow network) while the world moves on: an operator switches
the host on and its compute service comes back, or a second monitor
takes the leader lock and recovers the host, which an operator then
brings back. When the first monitor resumes it must not force a running
host down nor evacuate its servers: they would run on two hosts.

The stalled monitor (A) runs in this process, its looks driven by the
test, against the real API, BMCs, agents and leader lock of the cloud;
its stall is made at its boundary with the BMC (the answer of a read
held back) or with the compute API (a request held back). Everything
else is the real product: the second monitor is the real command.
"""

import shutil
import signal

import testtools

from nova_forcedown import conf as nf_conf
from nova_forcedown.monitor import compute_api
from nova_forcedown.monitor.drivers import base as drivers
from nova_forcedown.monitor import leadership
from nova_forcedown.monitor import manager
from tests.fixtures import held_back
from tests.fixtures import monitored_hosts
from tests.fixtures import processes
from tests.fixtures import redis_servers

HOST = 'rack-a-2'
FENCED = 'nova-forcedown-monitor: fenced'
# The history's event of the monitor's one write after a fence.
FENCED_DOWN = 'disable,force-down'
# Longest a test waits for a step of the cloud.
PATIENCE = held_back.PATIENCE


@testtools.skipIf(shutil.which('ipmitool') is None,
                  'ipmitool is not installed (apt-get install ipmitool)')
class FreshVerdictTestCase(testtools.TestCase):

    racks = {'rack-a': 3}

    def setUp(self):
        super().setUp()
        self.redis = self.useFixture(redis_servers.RedisServer())
        lock_url = redis_servers.backend_url(self.redis.port, 'fresh')
        self.cloud = self.useFixture(monitored_hosts.MonitoredHosts(
            self.racks, 'coordination_url = %s\nleader_timeout = 2'
            % lock_url))
        self.conf = nf_conf.make_conf(['--config-file', self.cloud.config])
        self.api = compute_api.from_conf(
            self.conf, compute_api.EVACUATE_ACTIVE_VERSION)
        self.leader = leadership.Leadership(
            lock_url, lifetime=self.conf.monitor.leader_timeout).start()
        self.addCleanup(self.leader.stop)
        self.gate = held_back.HeldBack()
        self.addCleanup(self.gate.opened.set)

    def monitor(self, load=None, api=None):
        monitor = manager.Monitor(
            self.conf, api or self.api, self.leader,
            load=load or held_back.StalledBmcReads(HOST, self.gate).load)
        self.addCleanup(monitor.stop, 5)
        return monitor

    def judged_and_stalled(self, monitor):
        """Switch HOST off; let ``monitor`` look until held at the gate."""
        self.assertEqual(0, self.cloud.ipmitool(
            HOST, 'chassis', 'power', 'off').returncode)
        self.wait_for(lambda: self.state() == 'down')

        def look_until_held():
            monitor.tick()
            return self.gate.reached.wait(0.5)
        self.wait_for(look_until_held)

    def resume(self, monitor):
        """Open the gate; wait until the monitor is done with HOST."""
        self.gate.opened.set()
        self.wait_for(lambda: HOST not in monitor._busy)

    def bring_back(self):
        """The operator switches HOST on; its agent heartbeats again."""
        self.assertEqual(0, self.cloud.ipmitool(
            HOST, 'chassis', 'power', 'on').returncode)
        rack = self.cloud.rack_of(HOST)
        rack.agent.stop(signal.SIGKILL)
        self.cloud.restart_agent(rack)
        self.wait_for(lambda: self.state() == 'up')

    def recovered(self):
        """Every server runs once, none of them on HOST."""
        copies = self.cloud.running_copies()
        return (len(copies) == self.cloud.servers and
                all(hosts != [HOST] and len(hosts) == 1
                    for hosts in copies.values()))

    def state(self):
        return self.cloud.states().get(HOST)

    def wait_for(self, predicate):
        self.assertTrue(processes.wait_until(predicate, timeout=PATIENCE))

    def assertPoweredOn(self):
        self.assertIn('Chassis Power is on', self.cloud.ipmitool(
            HOST, 'chassis', 'power', 'status').stdout)


class TestOneMonitorStalled(FreshVerdictTestCase):
    """It kept its lock; the host was switched on while it stalled."""

    def test_a_host_switched_on_meanwhile_is_not_fenced(self):
        monitor = self.monitor()
        self.wait_for(self.leader.leads)
        self.judged_and_stalled(monitor)

        self.bring_back()
        self.resume(monitor)

        self.assertEqual([], self.cloud.forced_down())
        self.assertPoweredOn()
        self.assertNotIn(FENCED, self.cloud.history(HOST))
        self.assertNotIn('evacuate', self.cloud.history(HOST))


class TestTwoMonitors(FreshVerdictTestCase):
    """It lost its lock while stalled; another monitor recovered the host.

    Then an operator switched the host on, forced it up and enabled it.
    """

    def test_the_first_monitor_does_nothing_when_it_resumes(self):
        monitor = self.monitor()
        self.wait_for(self.leader.leads)
        self.judged_and_stalled(monitor)

        # Its lock is lost: the backend restarts empty, and the second
        # monitor, the real command, takes it and recovers the host.
        self.redis.stop()
        self.redis.start()
        second = self.cloud.start_monitor()
        monitored_hosts.wait_for_log(second, 'Leading')
        self.assertEqual([HOST], self.cloud.wait_forced_down([HOST]))
        self.wait_for(self.recovered)
        second.stop()

        self.bring_back_recovered()
        self.resume(monitor)

        self.assertEqual([], self.cloud.forced_down())
        self.assertPoweredOn()
        self.assertEqual(1, self.cloud.history(HOST).count(FENCED_DOWN))
        for server, hosts in self.cloud.running_copies().items():
            self.assertEqual(1, len(hosts), (server, hosts))

    def bring_back_recovered(self):
        """The operator's return of a recovered host: on, up, enabled."""
        self.assertEqual(0, self.cloud.ipmitool(
            HOST, 'chassis', 'power', 'on').returncode)
        rack = self.cloud.rack_of(HOST)
        rack.agent.stop(signal.SIGKILL)
        self.cloud.restart_agent(rack)
        self.wait_for(lambda: self.cloud.manage(
            'service', 'force-down', HOST, '--unset').returncode == 0)
        self.assertEqual(0, self.cloud.manage(
            'service', 'enable', HOST).returncode)
        self.wait_for(lambda: self.state() == 'up')


class TestAStaleWriteRefusedByTheTarget(FreshVerdictTestCase):
    """The force-down held back on the wire while the service changed.

    Every check before it passed; the target itself refuses the write,
    as it carries the entity tag of the service it judged (412).
    """

    def test_the_force_down_is_refused_and_nothing_changes(self):
        monitor = self.monitor(load=drivers.load,
                               api=held_back.HeldWrites(self.api, self.gate))
        self.wait_for(self.leader.leads)
        self.judged_and_stalled(monitor)

        self.bring_back()
        self.resume(monitor)

        self.assertEqual([], self.cloud.forced_down())
        self.assertNotIn(FENCED, self.cloud.history(HOST))
