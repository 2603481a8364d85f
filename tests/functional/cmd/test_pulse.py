"""nova-forcedown-pulse as a compute host runs it, and the reader of pulses.

The pulse runs as a real process on a real Redis, with no database
configured. Whether a host is alive is read from Redis as tooz's Redis
driver decides it (the member is in the group's hash and its heartbeat
key has not expired), not through the code under test; the
MembershipReader, which the monitor uses, then reads the same.
"""

import os
import signal
import subprocess
import sys
import time

import fixtures
from oslotest import base

from nova_forcedown.cmd import pulse as pulse_cmd
from nova_forcedown.servicegroup import backend_heartbeat
from nova_forcedown.servicegroup import membership
from tests.fixtures import configuration
from tests.fixtures import processes
from tests.fixtures import redis_servers

INTERVAL = 1
TTL = 3
# What a loaded machine may add before a read sees an expired member gone.
MARGIN = 2
STARTED = 'Pulsing nova-compute:%s to %s every 1 s, TTL %d s.'
FAILED = 'Heartbeats to the coordination backend failed'
BACK = 'Recovered: heartbeats reach the coordination backend again'

_CONFIG = """[DEFAULT]
host = compute-a

[coordination]
backend_url = %(url)s

[pulse]
interval = %(interval)d
ttl = %(ttl)d
"""


class PulseTestCase(base.BaseTestCase):

    def setUp(self):
        super().setUp()
        self.directory = self.useFixture(fixtures.TempDir()).path

    def start_pulse(self, url, *args, ttl=TTL):
        """The pulse of compute-a ([DEFAULT] host), unless --host says."""
        config = processes.write_config(self.directory, _CONFIG % {
            'url': url, 'interval': INTERVAL, 'ttl': ttl})
        # HOME: no configuration file of the machine is read.
        return self.useFixture(processes.Process(
            [sys.executable, '-m', 'nova_forcedown.cmd.pulse',
             '--config-file', config, *args], env={'HOME': self.directory}))

    def wait_started(self, pulse, host, shown_url, ttl=TTL):
        line = STARTED % (host, shown_url, ttl)
        self.assertTrue(processes.wait_until(
            lambda: line in pulse.output() or pulse.process.poll() is not None,
            timeout=60), pulse.output())
        self.assertIsNone(pulse.process.poll(), pulse.output())


def _alive(client, namespace, host):
    """Whether tooz's Redis driver holds ``host``'s pulse alive."""
    member = membership.host_member_id(host)
    members = client.hkeys('%s_group:%s' % (
        namespace, membership.GROUP_ID.decode()))
    beat = client.exists('%s_beats:%s' % (namespace, member.decode()))
    return member in members and beat == 1


class TestPulse(PulseTestCase):

    def setUp(self):
        super().setUp()
        self.redis = self.useFixture(redis_servers.RedisNamespace())
        self.shown_url = 'redis://127.0.0.1:%d' % self.redis.port

    def alive(self, host='compute-a'):
        return _alive(self.redis.client, self.redis.namespace, host)

    def test_its_host_is_a_member_within_a_second_of_start(self):
        pulse = self.start_pulse(self.redis.url)
        self.wait_started(pulse, 'compute-a', self.shown_url)
        self.assertTrue(processes.wait_until(self.alive, timeout=1,
                                             interval=0.02), pulse.output())
        # No database: no state_path (~/.local/share/nova_forcedown), where
        # the default SQLite file would be.
        self.assertNotIn('.local', os.listdir(self.directory))

    def test_killed_its_host_is_gone_within_the_ttl(self):
        pulse = self.start_pulse(self.redis.url)
        self.wait_started(pulse, 'compute-a', self.shown_url)
        self.assertTrue(processes.wait_until(self.alive), pulse.output())
        pulse.process.kill()
        pulse.process.wait()
        killed_at = time.monotonic()
        self.assertTrue(self.alive())

        self.assertTrue(processes.wait_until(
            lambda: not self.alive(), timeout=TTL + MARGIN, interval=0.05))
        # Its last heartbeat expired: it did not leave.
        self.assertGreater(time.monotonic() - killed_at, TTL - INTERVAL - 1)
        reader = membership.MembershipReader(
            self.useFixture(configuration.ConfFixture(
                coordination__backend_url=self.redis.url)).conf)
        self.addCleanup(reader.stop)
        self.assertEqual(frozenset(), reader.members())

    def test_a_stop_leaves_the_group_at_once(self):
        # A TTL of a minute: only leaving explains that it is gone.
        for signum, host in ((signal.SIGTERM, 'compute-b'),
                             (signal.SIGINT, 'compute-c')):
            pulse = self.start_pulse(self.redis.url, '--host', host, ttl=60)
            self.wait_started(pulse, host, self.shown_url, ttl=60)
            self.assertTrue(processes.wait_until(lambda: self.alive(host)),
                            pulse.output())
            self.assertFalse(self.alive('compute-a'))

            pulse.process.send_signal(signum)
            self.assertEqual(0, pulse.process.wait(10), pulse.output())
            self.assertFalse(self.alive(host))
            self.assertIn('nova-compute:%s left the group' % host,
                          pulse.output())
            self.assertNotIn('Traceback', pulse.output())


class TestPulseWhileRedisIsAway(PulseTestCase):

    def test_says_once_that_redis_is_away_and_when_it_is_back(self):
        server = self.useFixture(redis_servers.RedisServer())
        namespace = 'away'
        pulse = self.start_pulse(redis_servers.backend_url(server.port,
                                                           namespace))
        self.wait_started(pulse, 'compute-a',
                          'redis://127.0.0.1:%d' % server.port)
        self.assertTrue(processes.wait_until(
            lambda: _alive(server.client, namespace, 'compute-a')),
            pulse.output())

        server.stop()
        # tooz's Redis client retries a refused connection for about a
        # minute within one heartbeat: the pulse says so within a second.
        self.assertTrue(processes.wait_until(
            lambda: FAILED in pulse.output(), timeout=10), pulse.output())

        server.start()
        self.assertTrue(processes.wait_until(
            lambda: BACK in pulse.output(), timeout=60), pulse.output())
        # Back in the group of a Redis that restarted empty.
        self.assertTrue(processes.wait_until(
            lambda: _alive(server.client, namespace, 'compute-a'),
            timeout=TTL + MARGIN), pulse.output())
        log = pulse.output()
        self.assertEqual(1, log.count(' WARNING '), log)
        self.assertEqual(1, log.count(FAILED), log)
        self.assertEqual(1, log.count(BACK), log)
        self.assertNotIn('Traceback', log)
        self.assertEqual(0, pulse.stop())


class TestMembershipReader(base.BaseTestCase):
    """The monitor's read of the pulses: bounded, free of the database."""

    def setUp(self):
        super().setUp()
        self.redis = self.useFixture(redis_servers.RedisNamespace())
        self.conf = self.useFixture(configuration.ConfFixture(
            coordination__backend_url=self.redis.url)).conf

    def reader(self, **kwargs):
        reader = membership.MembershipReader(self.conf, **kwargs)
        self.addCleanup(reader.stop)
        return reader

    def pulse(self, *hosts):
        beats = backend_heartbeat.BackendHeartbeat(
            self.conf, [pulse_cmd.Member('nova-compute', host)
                        for host in hosts], interval=INTERVAL, ttl=TTL)
        self.assertTrue(beats.tick())
        self.addCleanup(beats.leave, TTL)

    def test_no_member_before_the_first_pulse(self):
        self.assertEqual(frozenset(), self.reader().members())

    def test_reads_the_hosts_whose_pulses_are_alive(self):
        self.pulse('compute-a', 'compute-b')
        self.assertEqual(frozenset({b'nova-compute:compute-a',
                                    b'nova-compute:compute-b'}),
                         self.reader().members())

    def test_a_caller_that_reads_often_sees_each_change(self):
        reader = self.reader(reads_every=0.2)
        self.assertEqual(frozenset(), reader.members())
        self.pulse('compute-a')
        time.sleep(0.15)
        self.assertEqual(frozenset({membership.host_member_id('compute-a')}),
                         reader.members())

    def test_its_own_backend_url_wins_over_the_configured_one(self):
        self.pulse('compute-a')
        self.conf.set_override('backend_url', 'redis://127.0.0.1:1',
                               group='coordination')
        reader = self.reader(backend_url=self.redis.url)
        self.assertEqual(frozenset({b'nova-compute:compute-a'}),
                         reader.members())

    def test_an_unreachable_backend_is_unknown_within_the_bound(self):
        # Nothing listens: tooz's client retries for about a minute.
        reader = self.reader(backend_url=redis_servers.backend_url(
            processes.free_port(), 'nobody'))
        started = time.monotonic()
        self.assertIsNone(reader.members())
        self.assertLess(time.monotonic() - started,
                        membership.READ_TIMEOUT + 1)
        # The read carries on; until it ends, callers wait no more.
        started = time.monotonic()
        self.assertIsNone(reader.members())
        self.assertLess(time.monotonic() - started,
                        membership.READ_TIMEOUT + 1)

    def test_a_stopped_reader_says_unknown(self):
        reader = self.reader()
        self.assertEqual(frozenset(), reader.members())
        reader.stop()
        self.assertIsNone(reader.members())

    def test_it_imports_nothing_of_the_database(self):
        for module in ('nova_forcedown.servicegroup.membership',
                       'nova_forcedown.cmd.pulse'):
            result = subprocess.run(
                [sys.executable, '-c',
                 'import sys, %s; print([m for m in sys.modules if '
                 'm.startswith("nova_forcedown.db") or '
                 'm.startswith("nova_forcedown.objects")])' % module],
                capture_output=True, text=True, timeout=60)
            self.assertEqual(0, result.returncode, result.stderr)
            self.assertEqual('[]', result.stdout.strip(), module)
