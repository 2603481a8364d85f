"""End to end: the real API server and heartbeat agent, driven by the real
clients an operator or a fence agent uses (python-novaclient, openstacksdk,
plain HTTP for the legacy /v2 routes)."""

import datetime
import json
import time
import warnings

import fixtures
from keystoneauth1 import session as ks_session
from keystoneauth1 import token_endpoint
from novaclient import client as nova_client
import openstack
import testtools

from tests.fixtures import commands
from tests.fixtures import processes

PROJECT = '0123456789abcdef0123456789abcdef'
TOKEN = 'admin:' + PROJECT
HOST = 'e2e-compute'


class EndToEndTestCase(testtools.TestCase):
    """An API server (--dev on a loopback port) on a fresh SQLite file."""

    # Heartbeat settings of the database's config file.
    DATABASE_OPTIONS = {}

    def setUp(self):
        super().setUp()
        warnings.simplefilter('ignore')
        self.database = self.useFixture(
            commands.DatabaseFile(**self.DATABASE_OPTIONS))
        config = []
        for path in self.api_config_files():
            config += ['--config-file', path]
        # Chosen after the config files, which may start servers of their
        # own on free ports: chosen before, the port could go to them.
        self.port = processes.free_port()
        self.endpoint = 'http://127.0.0.1:%d' % self.port
        self.api = self.useFixture(processes.Process([
            processes.script('nova-forcedown-api'), '--dev', *config,
            '--port', str(self.port)]))
        processes.wait_for_http(self.endpoint + '/', process=self.api.process)
        self.session = ks_session.Session(auth=token_endpoint.Token(
            self.endpoint + '/v2.1', TOKEN))

    def api_config_files(self):
        """The API's configuration files, later ones overriding."""
        return [self.database.config_file]

    def nova(self, version):
        return nova_client.Client(version, session=self.session)

    def start_agent(self, *args):
        agent = self.useFixture(commands.AgentProcess(self.database, *args))
        self.assertTrue(commands.wait_until(
            lambda: self.database.services(binary='nova-compute')),
            agent.log())
        return agent

    def report_count(self, host=HOST):
        return self.database.services(host=host,
                                      binary='nova-compute')[0][
            'report_count']

    def wait_for_heartbeats(self, host=HOST, beats=2):
        start = self.report_count(host)
        self.assertTrue(commands.wait_until(
            lambda: self.report_count(host) >= start + beats))

    def service_state(self, nova, host=HOST):
        (service,) = nova.services.list(host=host, binary='nova-compute')
        return service


class TestForceDownWithNovaclient(EndToEndTestCase):

    def test_force_down_at_2_11_is_down_at_once_and_sticky(self):
        self.start_agent('--driver', 'local', '--host', HOST)
        nova = self.nova('2.11')
        self.assertEqual('up', self.service_state(nova).state)

        result = nova.services.force_down(HOST, 'nova-compute', True)
        self.assertTrue(result.forced_down)
        service = self.service_state(nova)
        self.assertEqual(('down', True), (service.state, service.forced_down))
        (hypervisor,) = nova.hypervisors.search(HOST)
        self.assertEqual('down', hypervisor.state)

        # The agent keeps heartbeating; the service stays down.
        self.wait_for_heartbeats()
        self.assertEqual('down', self.service_state(nova).state)

        nova.services.force_down(HOST, 'nova-compute', False)
        service = self.service_state(nova)
        self.assertEqual(('up', False), (service.state, service.forced_down))

    def test_uuid_api_at_2_53(self):
        self.start_agent('--driver', 'local', '--host', HOST)
        nova = self.nova('2.53')
        service = self.service_state(nova)
        self.assertEqual(36, len(service.id))

        updated = nova.services.force_down(service.id, True)
        self.assertEqual(('down', True), (updated.state, updated.forced_down))
        updated = nova.services.disable_log_reason(service.id, 'fenced')
        self.assertEqual(('disabled', 'fenced'),
                         (updated.status, updated.disabled_reason))

        (hypervisor,) = nova.hypervisors.list()
        self.assertEqual(('down', 'disabled'),
                         (hypervisor.state, hypervisor.status))
        detail = nova.hypervisors.get(hypervisor.id)
        self.assertEqual('fenced', detail.service['disabled_reason'])
        self.assertGreater(detail.vcpus, 0)
        (found,) = nova.hypervisors.search(HOST)
        self.assertEqual(hypervisor.id, found.id)

        nova.services.force_down(service.id, False)
        nova.services.enable(service.id)
        self.assertEqual(('up', 'enabled'),
                         (self.service_state(nova).state,
                          self.service_state(nova).status))

    def test_stopped_agent_goes_down_only_after_service_down_time(self):
        agent = self.start_agent('--driver', 'local', '--host', HOST)
        nova = self.nova('2.11')
        self.wait_for_heartbeats(beats=1)
        self.assertEqual(0, agent.stop())
        (row,) = self.database.services(host=HOST)
        last_seen_up = datetime.datetime.fromisoformat(row['last_seen_up'])

        observed = []
        deadline = time.monotonic() + 15
        while time.monotonic() < deadline:
            state = self.service_state(nova).state
            age = (datetime.datetime.utcnow() - last_seen_up).total_seconds()
            observed.append((round(age, 2), state))
            if state == 'down':
                break
            time.sleep(0.2)
        # Up while the heartbeat is younger than service_down_time, down
        # after it (0.3 s allowed for reading the clock around a request).
        for age, state in observed:
            if age < commands.SERVICE_DOWN_TIME - 0.3:
                self.assertEqual('up', state, observed)
        self.assertEqual('down', observed[-1][1], observed)
        self.assertGreaterEqual(observed[-1][0], commands.SERVICE_DOWN_TIME,
                                observed)

        self.start_agent('--driver', 'local', '--host', HOST)
        self.assertTrue(commands.wait_until(
            lambda: self.service_state(nova).state == 'up'))

    def test_force_down_survives_an_agent_restart(self):
        agent = self.start_agent('--driver', 'local', '--host', HOST)
        nova = self.nova('2.11')
        nova.services.force_down(HOST, 'nova-compute', True)
        self.assertEqual(0, agent.stop())

        agent = self.start_agent('--driver', 'local', '--host', HOST)
        self.wait_for_heartbeats()
        self.assertEqual('down', self.service_state(nova).state)
        self.assertTrue(agent.wait_for_log('forced down'))

        nova.services.force_down(HOST, 'nova-compute', False)
        self.assertEqual('up', self.service_state(nova).state)


class TestTwoAgentsAsOneHost(EndToEndTestCase):
    """An agent left running with the host name another one heartbeats as."""

    ANOTHER = 'Another agent heartbeats as nova-compute on %s too' % HOST

    def start_agent(self, *args):
        directory = self.useFixture(fixtures.TempDir()).path
        reminders = processes.write_config(
            directory, '[DEFAULT]\nlog_reminder_interval = 3\n')
        return super().start_agent('--driver', 'local', '--host', HOST,
                                   '--config-file', reminders, *args)

    def test_both_say_so_and_the_one_left_says_when_it_ended(self):
        first = self.start_agent()
        self.wait_for_heartbeats(beats=3)
        self.assertNotIn(self.ANOTHER, first.log())

        second = self.start_agent()

        self.assertTrue(first.wait_for_log(self.ANOTHER), first.log())
        self.assertTrue(second.wait_for_log(self.ANOTHER), second.log())
        self.assertEqual(0, second.stop())
        self.assertTrue(first.wait_for_log(
            'No other agent has heartbeated as nova-compute on %s for 3 s.'
            % HOST), first.log())
        log = first.log()
        self.assertEqual(1, log.count(self.ANOTHER), log)
        self.assertIn('Run one agent per host name', log)
        self.assertNotIn('Traceback', log)


class TestOpenStackSDK(EndToEndTestCase):

    def test_negotiates_and_forces_down(self):
        self.start_agent('--driver', 'local', '--host', HOST)
        conn = openstack.connection.Connection(session=self.session,
                                               compute_api_version='2')
        (service,) = [s for s in conn.compute.services() if s.host == HOST]
        self.assertEqual('up', service.state)

        updated = conn.compute.update_service_forced_down(
            service, HOST, 'nova-compute', forced=True)
        self.assertTrue(updated.is_forced_down)
        (service,) = [s for s in conn.compute.services() if s.host == HOST]
        self.assertEqual('down', service.state)
        (hypervisor,) = conn.compute.hypervisors(details=True)
        self.assertEqual(('down', 'enabled'),
                         (hypervisor.state, hypervisor.status))

        conn.compute.update_service_forced_down(
            service, HOST, 'nova-compute', forced=False)
        (service,) = [s for s in conn.compute.services() if s.host == HOST]
        self.assertEqual('up', service.state)


class TestLegacyV2(EndToEndTestCase):

    def _get(self, path):
        status, body = processes.http_get(
            self.endpoint + '/v2/' + PROJECT + path,
            {'X-Auth-Token': TOKEN})
        self.assertEqual(200, status, body)
        return json.loads(body)

    def test_hypervisor_status_extension(self):
        self.start_agent('--driver', 'local', '--host', HOST)
        aliases = [ext['alias'] for ext in self._get('/extensions')[
            'extensions']]
        self.assertIn('os-hypervisor-status', aliases)
        self.nova('2.11').services.force_down(HOST, 'nova-compute', True)
        (hypervisor,) = self._get('/os-hypervisors/detail')['hypervisors']
        self.assertEqual('down', hypervisor['state'])
        self.assertEqual('enabled', hypervisor['status'])
        self.assertIn('disabled_reason', hypervisor['service'])
        self.assertIsInstance(hypervisor['id'], int)


class TestFakeDriverAtScale(EndToEndTestCase):
    # 200 hosts heartbeat from one process; leave them a realistic window.
    DATABASE_OPTIONS = {'service_down_time': 30}

    def test_two_hundred_hosts_list_with_their_states(self):
        self.start_agent('--driver', 'fake', '--hosts', '200',
                         '--host-prefix', 'sim-', '--instances', '1')
        # Registered, and each heartbeated once: on a loaded machine the
        # registration of 200 hosts may take longer than service_down_time,
        # and the first hosts then show down until their first heartbeat.
        self.assertTrue(commands.wait_until(
            lambda: self.database.query(
                'SELECT count(*) AS nodes FROM compute_nodes')[0]['nodes'] ==
            200 and not self.database.query(
                'SELECT id FROM services WHERE report_count = 0'),
            timeout=90))
        nova = self.nova('2.53')
        forced = self.service_state(nova, host='sim-7')
        nova.services.force_down(forced.id, True)

        services = nova.services.list(binary='nova-compute')
        self.assertEqual(200, len(services))
        states = {s.host: s.state for s in services}
        self.assertEqual('down', states.pop('sim-7'))
        self.assertEqual({'up'}, set(states.values()))

        hypervisors = nova.hypervisors.list()
        self.assertEqual(200, len(hypervisors))
        down = [h.hypervisor_hostname for h in hypervisors
                if h.state == 'down']
        self.assertEqual(1, len(down))
        self.assertIn('sim-7', down[0])
