"""The monitor's decisions: when a host is failed, which zones wait, how a
fence is confirmed, what a fence agent is told."""

import collections
import logging as std_logging
import os
import stat
import time

import fixtures
from oslotest import base

from nova_forcedown import conf as nf_conf
from nova_forcedown.conf import monitor as monitor_conf
from nova_forcedown.monitor import compute_api
from nova_forcedown.monitor import confirmation
from nova_forcedown.monitor import detection
from nova_forcedown.monitor.drivers import base as drivers
from nova_forcedown.monitor.drivers import fence_agent
from nova_forcedown.monitor.drivers import ipmi
from nova_forcedown.monitor import fencing
from nova_forcedown.monitor import in_flight
from nova_forcedown.monitor import leadership
from nova_forcedown.monitor import manager
from nova_forcedown.monitor import recovery
from tests.fixtures import processes

BMC_ONLY = [monitor_conf.BMC]
BOTH = [monitor_conf.BMC, monitor_conf.PROBE]

Service = collections.namedtuple('Service', 'host disabled forced_down')


OFF = drivers.BmcStatus(drivers.OFF, drivers.OK, ())
ON = drivers.BmcStatus(drivers.ON, drivers.OK, ())
ON_UNKNOWN = drivers.BmcStatus(drivers.ON, None, ())
ON_POWER_FAULT = drivers.BmcStatus(drivers.ON, drivers.CRITICAL,
                                   ('Main Power Fault',))
ON_FAN_FAULT = drivers.BmcStatus(drivers.ON, drivers.WARNING,
                                 ('Cooling/Fan Fault',))


class TestJudge(base.BaseTestCase):

    def test_a_host_whose_bmc_says_off_has_failed(self):
        verdict = confirmation.judge(BMC_ONLY, OFF, None)
        self.assertTrue(verdict.failed)
        self.assertIn('powered off', verdict.why)

    def test_powered_on_and_healthy_is_the_agent_alone(self):
        verdict = confirmation.judge(BMC_ONLY, ON, None)
        self.assertFalse(verdict.failed)
        self.assertIn('powered on and healthy: its agent alone', verdict.why)

    def test_a_health_the_bmc_does_not_say_is_not_a_fault(self):
        verdict = confirmation.judge(BMC_ONLY, ON_UNKNOWN, None)
        self.assertFalse(verdict.failed)
        self.assertIn('powered on: its agent alone', verdict.why)

    def test_powered_on_with_a_critical_fault_has_failed(self):
        verdict = confirmation.judge(BMC_ONLY, ON_POWER_FAULT, None)
        self.assertTrue(verdict.failed)
        self.assertEqual('its BMC says it is powered on with a critical '
                         'fault (Main Power Fault)', verdict.why)

    def test_a_warning_alone_is_not_a_failure(self):
        verdict = confirmation.judge(BMC_ONLY, ON_FAN_FAULT, None)
        self.assertFalse(verdict.failed)
        self.assertIn('warning fault (Cooling/Fan Fault): its agent alone',
                      verdict.why)

    def test_the_bmc_confirms_nothing_unless_asked(self):
        for status in (OFF, ON_POWER_FAULT):
            verdict = confirmation.judge([monitor_conf.PROBE], status, True)
            self.assertFalse(verdict.failed, status)

    def test_a_host_that_answers_is_never_fenced(self):
        for status in (ON, OFF, ON_POWER_FAULT):
            verdict = confirmation.judge(BOTH, status, True)
            self.assertFalse(verdict.failed, status)
            self.assertIn('answers', verdict.why)

    def test_unreachable_and_powered_on_is_a_hung_host(self):
        verdict = confirmation.judge(BOTH, ON, False)
        self.assertTrue(verdict.failed)
        self.assertIn('does not answer', verdict.why)

    def test_a_bmc_that_cannot_be_read_keeps_the_host(self):
        verdict = confirmation.judge(BOTH, 'IPMI 10.0.0.1:623: timeout',
                                     False)
        self.assertFalse(verdict.failed)
        self.assertIn('cannot be read (IPMI 10.0.0.1:623: timeout)',
                      verdict.why)

    def test_probe_asked_without_an_address(self):
        verdict = confirmation.judge([monitor_conf.PROBE], ON, None)
        self.assertFalse(verdict.failed)
        self.assertIn('no management_address', verdict.why)


class TestChassisStatus(base.BaseTestCase):
    """IPMI's Get Chassis Status bytes, as a BMC sends them."""

    def test_power_and_no_fault(self):
        self.assertEqual(ON, ipmi.chassis_status(bytearray([0x01, 0, 0])))
        self.assertEqual(OFF, ipmi.chassis_status(bytearray([0x00, 0, 0])))

    def test_a_power_fault_is_critical_and_a_fan_fault_a_warning(self):
        # Main power fault (byte 1 bit 3), cooling fault (byte 3 bit 3),
        # and a restore policy (bits 5-6) that is no fault.
        status = ipmi.chassis_status(bytearray([0x49, 0x00, 0x08]))
        self.assertEqual(drivers.ON, status.power)
        self.assertEqual(drivers.CRITICAL, status.health)
        self.assertEqual(('Main Power Fault', 'Cooling/Fan Fault'),
                         status.faults)
        self.assertEqual(ON_FAN_FAULT,
                         ipmi.chassis_status(bytearray([0x01, 0, 0x08])))

    def test_a_short_answer_is_a_bmc_error(self):
        self.assertRaises(drivers.FenceError, ipmi.chassis_status,
                          bytearray([0x01]))


class TestProbe(base.BaseTestCase):

    def test_a_refused_connection_is_an_answer(self):
        # Nothing listens on port 1 of loopback: the kernel refuses.
        self.assertTrue(confirmation.probe('127.0.0.1', 1, 1.0))

    def test_an_address_that_does_not_exist_does_not_answer(self):
        self.assertFalse(confirmation.probe('host.invalid', 22, 0.5))


class TestDetection(base.BaseTestCase):

    def test_suspects_are_down_enabled_and_not_forced_down(self):
        services = [Service('up', False, False), Service('down', False, False),
                    Service('disabled', True, False),
                    Service('forced', False, True)]
        suspects = detection.suspects(services,
                                      lambda service: service.host == 'up')
        self.assertEqual(['down'], suspects)

    def test_a_zone_past_its_limit_waits(self):
        services = [Service('a%d' % i, False, i == 1) for i in range(1, 5)]
        services += [Service('b%d' % i, False, False) for i in range(1, 5)]

        def zone_of(host):
            return host[0]
        refused = detection.refused_zones(services, ['a2', 'b1'], zone_of,
                                          0.5)
        # a: a1 forced down and a2 down is 2 of 4, not more than half.
        self.assertEqual([], refused)
        refused = detection.refused_zones(services, ['a2', 'a3', 'b1'],
                                          zone_of, 0.5)
        self.assertEqual([detection.Refusal('a', ['a2', 'a3'], 1, 4, 0.5)],
                         refused)


class ScriptedBmc(drivers.FenceDriver):
    """A BMC that answers from a script: the driver boundary, stubbed."""

    def __init__(self, states, fail_off=0):
        super().__init__(settings=None, timeout=1)
        self.states = list(states)
        self.fail_off = fail_off
        self.offs = 0

    def power_state(self):
        state = self.states.pop(0) if len(self.states) > 1 else self.states[0]
        if isinstance(state, Exception):
            raise state
        return state

    def power_off(self):
        self.offs += 1
        if self.offs <= self.fail_off:
            raise drivers.FenceError('busy')

    def power_on(self):
        raise AssertionError('a fence never switches a host on')


class Clock:

    def __init__(self):
        self.now = 0.0

    def __call__(self):
        return self.now

    def sleep(self, seconds):
        self.now += seconds


class TestFence(base.BaseTestCase):

    def fence(self, bmc, timeout=1.0, retries=1):
        clock = Clock()
        return fencing.fence(bmc, timeout, retries, clock=clock,
                             sleep=clock.sleep)

    def test_a_host_already_off_is_not_switched_again(self):
        bmc = ScriptedBmc([drivers.OFF])
        self.assertTrue(self.fence(bmc))
        self.assertEqual(0, bmc.offs)

    def test_a_power_just_read_is_not_read_again(self):
        bmc = ScriptedBmc([drivers.ON])
        clock = Clock()
        self.assertTrue(fencing.fence(bmc, 1.0, 0, clock=clock,
                                      sleep=clock.sleep, power=drivers.OFF))
        self.assertEqual(0, bmc.offs)

    def test_switched_off_and_seen_off(self):
        bmc = ScriptedBmc([drivers.ON, drivers.ON, drivers.OFF])
        self.assertFalse(self.fence(bmc))
        self.assertEqual(1, bmc.offs)

    def test_a_refused_power_off_is_tried_again(self):
        bmc = ScriptedBmc([drivers.ON, drivers.OFF], fail_off=1)
        self.assertFalse(self.fence(bmc, retries=1))
        self.assertEqual(2, bmc.offs)

    def test_never_seen_off_fails_after_the_retries(self):
        bmc = ScriptedBmc([drivers.ON])
        error = self.assertRaises(fencing.FenceFailed, self.fence, bmc,
                                  timeout=1.0, retries=2)
        self.assertEqual(3, bmc.offs)
        self.assertIn('still powered on after 1.0 s', str(error))


class TestFenceAgent(base.BaseTestCase):
    """A fence agent is a program reading name=value lines on stdin."""

    def setUp(self):
        super().setUp()
        self.directory = self.useFixture(fixtures.TempDir()).path
        self.log = os.path.join(self.directory, 'stdin')
        self.power = os.path.join(self.directory, 'power')

    def agent(self, status_exit):
        """An agent that logs its input; status exits ``status_exit``."""
        path = os.path.join(self.directory, 'fence_test')
        with open(path, 'w') as script:
            script.write(
                '#!/bin/sh\ncat >> %s\n'
                'grep -q "^action=status" %s && exit %d\nexit 0\n'
                % (self.log, self.log, status_exit))
        os.chmod(path, os.stat(path).st_mode | stat.S_IEXEC)
        return path

    def driver(self, agent):
        settings = monitor_conf.HostSettings(
            host='compute-1', fence_driver='fence_agent',
            bmc_address='192.0.2.10', bmc_port=623, bmc_username='admin',
            bmc_password='secret', management_address=None,
            fence_agent=agent, fence_agent_options={'lanplus': '1'},
            redfish_system=None, redfish_scheme='https', redfish_verify=True)
        return fence_agent.FenceAgentDriver(settings, timeout=5)

    def test_status_exit_codes_are_the_power(self):
        self.assertEqual(drivers.ON,
                         self.driver(self.agent(0)).power_state())
        os.unlink(self.log)
        self.assertEqual(drivers.OFF,
                         self.driver(self.agent(2)).power_state())

    def test_it_gets_the_standard_arguments(self):
        self.driver(self.agent(0)).power_off()
        with open(self.log) as stdin:
            self.assertEqual('action=off\nip=192.0.2.10\nipport=623\n'
                             'username=admin\npassword=secret\nlanplus=1\n',
                             stdin.read())

    def test_a_failing_agent_is_a_fence_error(self):
        error = self.assertRaises(drivers.FenceError,
                                  self.driver(self.agent(1)).power_state)
        self.assertIn('exit 1', str(error))

    def test_a_missing_agent_is_a_fence_error(self):
        error = self.assertRaises(
            drivers.FenceError,
            self.driver(os.path.join(self.directory, 'nothing')).power_off)
        self.assertIn('nothing off', str(error))


class TestLeaderLock(base.BaseTestCase):

    def conf(self, text=''):
        directory = self.useFixture(fixtures.TempDir()).path
        path = os.path.join(directory, 'nova_forcedown.conf')
        with open(path, 'w') as config:
            config.write('[DEFAULT]\nstate_path = %s\n%s' % (directory, text))
        return nf_conf.make_conf(['--config-file', path]), directory

    def test_the_db_driver_locks_a_file(self):
        conf, directory = self.conf()
        self.assertEqual('file://' + os.path.join(directory, 'monitor-locks'),
                         leadership.lock_url(conf))

    def test_redis_locks_expire_after_the_leader_timeout(self):
        conf, _ = self.conf('servicegroup_driver = tooz\n'
                            '[coordination]\n'
                            'backend_url = redis://127.0.0.1:6379?db=2\n'
                            '[monitor]\nleader_timeout = 3\n')
        self.assertEqual('redis://127.0.0.1:6379?db=2&lock_timeout=3',
                         leadership.lock_url(conf))

    def test_starting_again_keeps_tooz_tracebacks_out_once(self):
        conf, _ = self.conf()
        for member in ('monitor-a', 'monitor-b'):
            leader = leadership.Leadership(leadership.lock_url(conf),
                                           member).start()
            self.addCleanup(leader.stop)
        for name in ('tooz.drivers.redis', 'tooz.coordination'):
            filters = std_logging.getLogger(name).filters
            self.assertEqual(1, sum(
                type(f).__name__ == '_WithoutTraceback' for f in filters))

    def test_a_lock_out_of_reach_at_start_is_tried_again_at_each_look(self):
        # The file lock's directory cannot be made while a file stands in
        # its way: the backend is away, as a stopped Redis is.
        log = self.useFixture(fixtures.FakeLogger(
            name=leadership.__name__, level=std_logging.INFO,
            format='%(levelname)s %(message)s'))
        directory = self.useFixture(fixtures.TempDir()).path
        blocker = os.path.join(directory, 'blocker')
        open(blocker, 'w').close()
        leader = leadership.Leadership(
            'file://' + os.path.join(blocker, 'locks'), 'monitor-a').start()
        self.addCleanup(leader.stop)

        self.assertFalse(leader.leads())
        self.assertFalse(leader.leads())
        os.remove(blocker)
        self.assertTrue(leader.leads())

        lines = log.output.splitlines()
        self.assertEqual(2, len(lines), lines)
        self.assertTrue(lines[0].startswith(
            'WARNING Cannot reach the leader lock at file://%s/locks (' %
            blocker), lines[0])
        self.assertIn('standing by, trying again at each look.', lines[0])
        self.assertTrue(lines[1].startswith(
            'INFO Reached the leader lock at file://%s/locks, after ' %
            blocker), lines[1])

    def test_a_lock_backend_that_does_not_answer_is_said_at_the_look(self):
        # tooz's Redis driver retries a refused connection for a minute
        # inside its connect: the look neither waits for it nor is silent.
        log = self.useFixture(fixtures.FakeLogger(
            name=leadership.__name__, level=std_logging.INFO,
            format='%(levelname)s %(message)s'))
        port = processes.free_port()
        leader = leadership.Leadership('redis://127.0.0.1:%d' % port,
                                       'monitor-a').start()
        self.addCleanup(leader.stop)

        started = time.monotonic()
        self.assertFalse(leader.leads())
        self.assertFalse(leader.leads())
        self.assertLess(time.monotonic() - started, 30)

        self.assertEqual(
            ['WARNING Cannot reach the leader lock at redis://127.0.0.1:%d '
             '(no answer for 2 s); standing by, trying again at each look.'
             % port], log.output.splitlines())

    def test_the_lock_is_shown_without_credentials(self):
        leader = leadership.Leadership(
            'redis://:s3cret@127.0.0.1:6379/0?db=2&lock_timeout=3')
        self.assertEqual('redis://127.0.0.1:6379/0', leader.shown_url)
        leader = leadership.Leadership('redis://admin:s3cret@[::1]:6379')
        self.assertEqual('redis://[::1]:6379', leader.shown_url)

    def test_host_sections_fill_in_from_monitor(self):
        conf, _ = self.conf('[monitor]\nbmc_username = admin\n'
                            'bmc_port = 6230\n'
                            '[monitor_host:compute-1]\n'
                            'bmc_address = 192.0.2.1\nbmc_port = 6231\n')
        settings = monitor_conf.host_settings(conf, 'compute-1')
        self.assertEqual(('192.0.2.1', 6231, 'admin', 'ipmi'),
                         (settings.bmc_address, settings.bmc_port,
                          settings.bmc_username, settings.fence_driver))
        other = monitor_conf.host_settings(conf, 'compute-2')
        self.assertEqual((None, 6230), (other.bmc_address, other.bmc_port))


class TestInFlight(base.BaseTestCase):
    """[monitor] max_in_flight over looks and jobs that start between them."""

    def test_claims_never_pass_the_bound(self):
        count = in_flight.InFlight(5)
        self.assertEqual([3, 2, 0], [count.claim(3), count.claim(3),
                                     count.claim(1)])

    def test_what_a_read_found_under_way_takes_room(self):
        count = in_flight.InFlight(5)
        count.read(4, count.read_begins())
        self.assertEqual(1, count.claim(3))

    def test_released_claims_give_room_back(self):
        count = in_flight.InFlight(5)
        count.claim(5)
        count.released(2)
        self.assertEqual(2, count.claim(5))

    def test_started_during_a_read_is_counted_though_the_read_missed_it(self):
        count = in_flight.InFlight(5)
        count.claim(2)
        mark = count.read_begins()
        count.started()
        count.started()
        # The read began before either evacuation was accepted.
        count.read(0, mark)
        self.assertEqual(3, count.claim(5))

    def test_a_job_still_running_at_a_read_keeps_its_promise(self):
        count = in_flight.InFlight(5)
        count.claim(4)
        count.started()
        count.read(1, count.read_begins())
        # One started (read), three promised: one left.
        self.assertEqual(1, count.claim(5))

    def test_the_next_read_forgets_what_ended(self):
        count = in_flight.InFlight(5)
        count.claim(5)
        for _ in range(5):
            count.started()
        self.assertEqual(0, count.claim(1))
        count.read(0, count.read_begins())
        self.assertEqual(5, count.claim(5))


class StuckEvacuationAPI:
    """A compute API where one evacuation waits for a destination gone down.

    The target's answers are the test's boundary: the monitor under test
    reads them as it reads Nova's.
    """

    def __init__(self):
        fenced = recovery.fenced_reason(False)
        self.services = [
            compute_api.Service('s1', 'compute1', 'nova', True, fenced, True,
                                False, 't1'),
            compute_api.Service('s2', 'compute2', 'nova', False, None, False,
                                False, 't2'),
            compute_api.Service('s3', 'compute3', 'nova', False, None, False,
                                True, 't3')]
        self.evacuated = []

    def evacuations_from(self, host):
        return [compute_api.Migration(7, 'server-1', 'accepted', 'compute2',
                                      't0')] if host == 'compute1' else []

    def servers_on(self, host):
        return [compute_api.Server('server-1', 'ACTIVE', 'rebuilding', {},
                                   {}, 'compute1', None)]

    def evacuate(self, server_id, host=None):
        self.evacuated.append(server_id)


class TestStuckEvacuation(base.BaseTestCase):

    def test_said_once_and_not_tried_again(self):
        log = self.useFixture(fixtures.FakeLogger(
            name=manager.__name__, level=std_logging.INFO,
            format='%(levelname)s %(message)s'))
        directory = self.useFixture(fixtures.TempDir()).path
        conf = nf_conf.make_conf([])
        conf.set_override('state_path', directory)
        api = StuckEvacuationAPI()
        monitor = manager.Monitor(conf, api, leadership=None)
        self.addCleanup(monitor.stop, 5)
        monitor.recover(api.services)
        monitor.recover(api.services)
        said = [line for line in log.output.splitlines() if 'stuck' in line]
        self.assertEqual(1, len(said), log.output)
        self.assertIn('ERROR Evacuation of server server-1 from host '
                      'compute1 to compute2 is stuck (accepted): compute2 '
                      'is down.', said[0])
        self.assertEqual([], api.evacuated)


class TestToEvacuate(base.BaseTestCase):

    def test_a_server_being_evacuated_is_never_evacuated_again(self):
        conf = nf_conf.make_conf([])
        idle = compute_api.Server('idle', 'ACTIVE', None, {}, {}, 'h1', None)
        # Listed on its source with no task while its rebuild runs, as
        # Nova 34 was seen to list one.
        moving = compute_api.Server('moving', 'ACTIVE', None, {}, {}, 'h1',
                                    None)
        migrations = [compute_api.Migration(1, 'moving', 'pre-migrating',
                                            'h2', 't0')]
        self.assertEqual(['idle'], [server.id for server in
                                    recovery.to_evacuate(conf, [idle, moving],
                                                         migrations)])
