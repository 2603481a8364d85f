"""Redis goes away under a running API and agent on the tooz driver.

A TCP proxy on loopback stands between both processes and a private
redis-server. While it is cut (connections reset, or black-holed), or
while Redis restarts empty, no host that heartbeats is ever listed down
and a forced-down host is always listed down: the agent keeps writing its
database heartbeat every [coordination] database_report_interval, and the
API judges from it whenever it has no answer from Redis. A listing never
waits for Redis longer than the reader's READ_TIMEOUT. Once Redis is back,
the test measures how long until every host heartbeats there again.
"""

import os
import time

from oslo_serialization import jsonutils

from nova_forcedown.servicegroup import membership
from tests.fixtures import commands
from tests.fixtures import figures
from tests.fixtures import processes
from tests.fixtures import redis_servers
from tests.fixtures import tcp_proxy
from tests.functional.e2e import test_end_to_end as e2e

HOSTS = 3
PREFIX = 'fault-'
DOWN_TIME = 6
# Longest acceptable listing while Redis is away: the reader's bounded
# wait, plus slack for two busy cores.
BOUND = membership.READ_TIMEOUT + 3
RECOVERY_LIMIT = 30
NAMESPACE = 'faults'

_CONFIG = """[DEFAULT]
servicegroup_driver = tooz

[coordination]
backend_url = %s
"""


class TestRedisFaults(e2e.EndToEndTestCase):

    DATABASE_OPTIONS = {'service_down_time': DOWN_TIME}

    def api_config_files(self):
        self.redis = self.useFixture(redis_servers.RedisServer())
        self.proxy = self.useFixture(tcp_proxy.TCPProxy(self.redis.port))
        self.tooz_config = os.path.join(self.database.state_path,
                                        'tooz.conf')
        with open(self.tooz_config, 'w') as config:
            # A black-holed socket times out after 2 s, not tooz's 30.
            config.write(_CONFIG % redis_servers.backend_url(
                self.proxy.port, NAMESPACE, timeout=2))
        return [self.database.config_file, self.tooz_config]

    def setUp(self):
        super().setUp()
        self.agent = self.start_agent(
            '--config-file', self.tooz_config, '--driver', 'fake',
            '--hosts', str(HOSTS), '--host-prefix', PREFIX)
        self.assertTrue(commands.wait_until(self._all_beating, timeout=40),
                        self.agent.log())
        self.nova = self.nova('2.11')
        self.nova.services.force_down(PREFIX + '3', 'nova-compute', True)
        self.expected = {PREFIX + '1': 'up', PREFIX + '2': 'up',
                         PREFIX + '3': 'down'}
        self.assertEqual(self.expected, self._states()[0])

    def _beat_keys(self):
        return ['%s_beats:nova-compute:%s%d' % (NAMESPACE, PREFIX, index)
                for index in range(1, HOSTS + 1)]

    def _all_beating(self):
        """Every host heartbeats in Redis and is a member of the group."""
        try:
            fresh = all(self.redis.client.pttl(key) > (DOWN_TIME - 1.5) * 1000
                        for key in self._beat_keys())
            members = self.redis.client.hkeys(
                NAMESPACE + '_group:' + membership.GROUP_ID.decode())
        except Exception:
            return False
        return fresh and len([member for member in members
                              if member.startswith(b'nova-compute:')]) == HOSTS

    def _states(self):
        started = time.monotonic()
        status, body = processes.http_get(
            self.endpoint + '/v2.1/os-services?binary=nova-compute',
            headers={'X-Auth-Token': e2e.TOKEN,
                     'OpenStack-API-Version': 'compute 2.11'}, timeout=30)
        elapsed = time.monotonic() - started
        if status != 200:
            return {'status': status}, elapsed
        return ({service['host']: service['state'] for service in
                 jsonutils.loads(body)['services']}, elapsed)

    def _watch(self, seconds):
        """Listings for ``seconds``: the wrong ones and the slowest."""
        wrong, slowest = [], 0.0
        deadline = time.monotonic() + seconds
        while time.monotonic() < deadline:
            states, elapsed = self._states()
            slowest = max(slowest, elapsed)
            if states != self.expected:
                wrong.append(states)
            time.sleep(0.2)
        return wrong, slowest

    def _away_then_back(self, away, back, label):
        away()
        wrong, slowest = self._watch(2 * DOWN_TIME)
        # A force-down while Redis is away is down at once, and back up.
        self.nova.services.force_down(PREFIX + '2', 'nova-compute', True)
        self.assertEqual('down', self._states()[0][PREFIX + '2'])
        self.nova.services.force_down(PREFIX + '2', 'nova-compute', False)
        back()
        back_at = time.monotonic()
        recovered = commands.wait_until(self._all_beating,
                                        timeout=RECOVERY_LIMIT)
        recovery = time.monotonic() - back_at
        more_wrong, more_slowest = self._watch(2)
        figures.record(self, fault=label, slowest_listing=round(
            max(slowest, more_slowest), 2), recovery_seconds=round(
            recovery, 1))
        self.assertEqual([], wrong + more_wrong)
        self.assertLess(max(slowest, more_slowest), BOUND)
        self.assertTrue(recovered, self.agent.log())

    def assertApiSaidOutageOnce(self):
        """An outage is one WARNING at its start and one line at its end.

        Never a traceback. The API reads the backend again only when a
        request asks, RETRY_AFTER (5 s) after its last failed read, so the
        line at the end may come after the first listings that are right
        again: listings are sent until it does.
        """
        away = 'The coordination backend is unreachable'
        back = 'Recovered: the coordination backend answers again'

        def said_back():
            self._states()
            output = self.api.output()
            return output.count(back) >= output.count(away)

        commands.wait_until(said_back, timeout=RECOVERY_LIMIT, interval=0.5)
        output = self.api.output()
        self.assertNotIn('Traceback', output)
        started = output.count(away)
        self.assertLessEqual(started, 1, output)
        self.assertEqual(started, output.count(back), output)

    def test_connections_reset(self):
        self._away_then_back(lambda: self.proxy.cut(tcp_proxy.RESET),
                             self.proxy.restore, 'reset')
        self.assertIn('coordination backend', self.api.output() +
                      self.agent.log())
        self.assertApiSaidOutageOnce()

    def test_network_lost(self):
        self._away_then_back(lambda: self.proxy.cut(tcp_proxy.BLACKHOLE),
                             self.proxy.restore, 'blackhole')

    def test_redis_restarts_empty(self):
        self._away_then_back(self.redis.stop, self.redis.start, 'restart')
        # Redis' own ConnectionError, which tooz does not wrap, included.
        self.assertApiSaidOutageOnce()
        self.assertNotIn('Traceback', self.agent.log())

    def test_the_agent_says_at_once_that_redis_is_away(self):
        failed = 'Heartbeats to the coordination backend failed'
        back = 'Recovered: heartbeats reach the coordination backend again'
        self.redis.stop()
        # tooz's Redis client retries a refused connection for about a
        # minute within one heartbeat: the agent says so before that.
        self.assertTrue(commands.wait_until(
            lambda: failed in self.agent.log(), timeout=DOWN_TIME),
            self.agent.log())

        self.redis.start()
        self.assertTrue(commands.wait_until(
            lambda: back in self.agent.log(), timeout=RECOVERY_LIMIT),
            self.agent.log())
        log = self.agent.log()
        self.assertEqual(1, log.count(failed), log)
        self.assertNotIn('Traceback', log)

    def test_the_agent_stops_at_once_while_redis_is_away(self):
        self.redis.stop()
        # Its next heartbeats wait on tooz's Redis client, which retries a
        # refused connection for about a minute.
        time.sleep(2 * DOWN_TIME / 3)

        self.assertEqual(0, self.agent.stop(timeout=DOWN_TIME * 2),
                         self.agent.log())
        self.assertNotIn('Traceback', self.agent.log())
