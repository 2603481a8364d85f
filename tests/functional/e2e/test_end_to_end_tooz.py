"""End to end on the tooz driver: the real API server and agent on Redis.

The agent heartbeats its hosts to Redis (a namespace of the test's own)
every report_interval, and to the database at [coordination]
database_report_interval; the API reads the membership. Also the switch of
a running cloud from the db driver to tooz and back, one process at a
time, with no host ever listed down.
"""

import os
import threading
import time

from oslo_serialization import jsonutils

from tests.fixtures import commands
from tests.fixtures import processes
from tests.fixtures import redis_servers
from tests.functional.e2e import test_end_to_end as e2e

HOSTS = 3
PREFIX = 'tooz-'

_TOOZ_CONFIG = """[DEFAULT]
servicegroup_driver = tooz

[coordination]
backend_url = %(url)s
%(extra)s
"""


class ToozEndToEndTestCase(e2e.EndToEndTestCase):
    """API (and agents, with :meth:`start_tooz_agent`) on tooz."""

    # Seconds between the agent's database heartbeats; None: the default.
    DATABASE_REPORT_INTERVAL = None

    def api_config_files(self):
        return [self.database.config_file, self.tooz_config()]

    def tooz_config(self):
        if not hasattr(self, 'redis'):
            self.redis = self.useFixture(redis_servers.RedisNamespace())
            path = os.path.join(self.database.state_path, 'tooz.conf')
            extra = ('' if self.DATABASE_REPORT_INTERVAL is None else
                     'database_report_interval = %d'
                     % self.DATABASE_REPORT_INTERVAL)
            with open(path, 'w') as config:
                config.write(_TOOZ_CONFIG % {'url': self.redis.url,
                                             'extra': extra})
            self.tooz_config_file = path
        return self.tooz_config_file

    def start_tooz_agent(self, *args):
        return self.start_agent('--config-file', self.tooz_config(), *args)

    def start_fake_hosts(self, tooz=True):
        start = self.start_tooz_agent if tooz else self.start_agent
        agent = start('--driver', 'fake', '--hosts', str(HOSTS),
                      '--host-prefix', PREFIX)
        self.assertTrue(commands.wait_until(
            lambda: len(self.states()) == HOSTS and
            set(self.states().values()) == {'up'}), agent.log())
        return agent

    def states(self, endpoint=None):
        """{host: state} of the compute services, through plain HTTP."""
        status, body = processes.http_get(
            (endpoint or self.endpoint) +
            '/v2.1/os-services?binary=nova-compute',
            headers={'X-Auth-Token': e2e.TOKEN,
                     'OpenStack-API-Version': 'compute 2.11'})
        if status != 200:
            return {}
        return {service['host']: service['state']
                for service in jsonutils.loads(body)['services']}

    def members(self):
        group = self.redis.namespace + '_group:nova-forcedown-services'
        return sorted(member.decode() for member in
                      self.redis.client.hkeys(group)
                      if member.startswith(b'nova-compute:'))


class TestAgentOnTooz(ToozEndToEndTestCase):
    # The database hears from the agent once an hour: liveness is Redis's.
    DATABASE_REPORT_INTERVAL = 3600

    def test_hosts_stay_up_on_backend_heartbeats_alone(self):
        self.start_fake_hosts()
        expected = ['nova-compute:%s%d' % (PREFIX, index)
                    for index in range(1, HOSTS + 1)]
        # Up from the database at registration, a moment before joining.
        self.assertTrue(commands.wait_until(
            lambda: self.members() == expected), self.members())
        counts = [row['report_count'] for row in self.database.services()]
        observed = set()
        deadline = time.monotonic() + 3 * commands.SERVICE_DOWN_TIME
        while time.monotonic() < deadline:
            observed.update(self.states().values())
            time.sleep(0.2)
        self.assertEqual({'up'}, observed)
        # The database heartbeat was written once, at start.
        self.assertEqual(counts, [row['report_count']
                                  for row in self.database.services()])

    def test_force_down_is_down_at_once_and_a_stopped_agent_goes_down(self):
        agent = self.start_fake_hosts()
        nova = self.nova('2.11')
        nova.services.force_down(PREFIX + '2', 'nova-compute', True)
        self.assertEqual({PREFIX + '1': 'up', PREFIX + '2': 'down',
                          PREFIX + '3': 'up'}, self.states())

        self.assertEqual(0, agent.stop())
        self.assertTrue(commands.wait_until(
            lambda: set(self.states().values()) == {'down'},
            timeout=commands.SERVICE_DOWN_TIME + 5))


class TestForcedDownLearnedFromTheDatabase(ToozEndToEndTestCase):
    DATABASE_REPORT_INTERVAL = 1

    def test_agent_logs_that_its_host_is_forced_down(self):
        agent = self.start_fake_hosts()
        self.nova('2.11').services.force_down(PREFIX + '1', 'nova-compute',
                                              True)
        self.assertTrue(agent.wait_for_log('is forced down'), agent.log())
        self.assertEqual('up', self.states()[PREFIX + '3'])


class TestSwitchingDrivers(ToozEndToEndTestCase):
    """db -> tooz -> db, API nodes and agents apart, nothing flaps down.

    One API node stays on db, one runs tooz; the agent restarts from one
    driver to the other and back. An agent's restart must fit in
    service_down_time, as on the db driver alone: on a busy machine (a
    load average of 25 on two CPUs) a restart took over 10 s, so the test
    gives it 30.
    """

    DOWN_TIME = 30
    DATABASE_OPTIONS = {'service_down_time': DOWN_TIME}

    def setUp(self):
        super().setUp()
        self.db_endpoint = self.endpoint
        port = processes.free_port()
        self.useFixture(processes.Process([
            processes.script('nova-forcedown-api'), '--dev', '--config-file',
            self.database.config_file, '--config-file', self.tooz_config(),
            '--port', str(port)]))
        self.tooz_endpoint = 'http://127.0.0.1:%d' % port
        processes.wait_for_http(self.tooz_endpoint + '/')

    def api_config_files(self):
        """The API of the base class stays on the db driver."""
        return [self.database.config_file]

    def _watch(self, stop, seen, events):
        start = time.monotonic()
        while not stop.is_set():
            for name, endpoint in (('db', self.db_endpoint),
                                   ('tooz', self.tooz_endpoint)):
                for host, state in self.states(endpoint).items():
                    seen.add((name, host, state))
                    if state != 'up':
                        events.append((round(time.monotonic() - start, 1),
                                       name, host, state))
            time.sleep(0.1)

    def test_no_host_is_ever_listed_down(self):
        agent = self.start_fake_hosts(tooz=False)
        stop, seen, events = threading.Event(), set(), []
        watcher = threading.Thread(target=self._watch,
                                   args=(stop, seen, events))
        watcher.start()
        try:
            time.sleep(2)
            self.assertEqual(0, agent.stop())
            agent = self.start_fake_hosts(tooz=True)
            self.assertTrue(commands.wait_until(
                lambda: len(self.members()) == HOSTS), agent.log())
            # Longer than service_down_time: the db node sees the tooz
            # agent's database heartbeats.
            time.sleep(self.DOWN_TIME + 2)
            self.assertEqual(0, agent.stop())
            agent = self.start_fake_hosts(tooz=False)
            time.sleep(2)
        finally:
            stop.set()
            watcher.join()
        self.assertEqual([], events, agent.log())
        self.assertEqual({'db', 'tooz'}, {entry[0] for entry in seen})
