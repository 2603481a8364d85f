"""Tasks told over RPC: the real API server and agent, the real RabbitMQ.

Each test has a virtual host of its own (tests/fixtures/rabbitmq.py). The
agent looks in the database only every 60 s besides its start, so a task
done within the test's waits was done on its cast; the tests of a lost
cast and of a broker cut shorten that look to show it finds what the
casts did not bring.
"""

import os

from nova_forcedown import conf as nf_conf
from nova_forcedown import context as nf_context
from nova_forcedown.rpc import compute as rpc_compute
from nova_forcedown.rpc import transport as rpc_transport
from tests.fixtures import commands
from tests.fixtures import processes
from tests.fixtures import rabbitmq
from tests.fixtures import tcp_proxy
from tests.functional.e2e import test_end_to_end

OWNER = 'fedcba9876543210fedcba9876543210'

_RPC_CONFIG = """[DEFAULT]
transport_url = %(url)s
task_reconcile_interval = %(interval)s
"""

# Longer than any wait of a test: what is done in time came by its cast.
NO_LOOK_IN_TIME = 60


class OverRPC:
    """An end-to-end test case whose API and agents talk over RabbitMQ.

    Mixed in before an EndToEndTestCase: the API casts, every agent
    listens, in a virtual host of the test's own.
    """

    RECONCILE_INTERVAL = NO_LOOK_IN_TIME

    def api_config_files(self):
        return self.database_config_and_vhost() + [self.rpc_config(
            'rpc-api.conf', self.vhost.url())]

    def database_config_and_vhost(self):
        """The API's files but this mixin's, once the test's vhost is made."""
        rabbitmq.require_broker(self)
        self.vhost = self.useFixture(rabbitmq.VirtualHost())
        return super().api_config_files()

    def rpc_config(self, name, url, interval=None):
        path = os.path.join(self.database.state_path, name)
        with open(path, 'w') as config:
            config.write(_RPC_CONFIG % {
                'url': url, 'interval': interval or self.RECONCILE_INTERVAL})
        return path

    def start_agent(self, *args, url=None, interval=None):
        self.agents_started = getattr(self, 'agents_started', 0) + 1
        config = self.rpc_config('rpc-agent-%d.conf' % self.agents_started,
                                 url or self.vhost.url(), interval)
        return super().start_agent(*args, '--config-file', config)


class RPCTasksTestCase(OverRPC, test_end_to_end.EndToEndTestCase):
    """Two fake hosts of two servers each, one agent for both."""

    def setUp(self):
        super().setUp()
        self.agent = self.start_agent(*self.agent_args())
        self.assertTrue(commands.wait_until(lambda: len(self.database.query(
            'SELECT id FROM instances')) == 4), self.agent.log())
        self.assertTrue(self.agent.wait_for_log(
            'Tasks are told over RPC at compute.rpc-1'), self.agent.log())
        self.nova_client = self.nova('2.29')

    def agent_args(self):
        return ('--driver', 'fake', '--hosts', '2', '--instances', '2',
                '--host-prefix', 'rpc-', '--project-id', OWNER)

    def server_of(self, host, index=0):
        servers = self.nova_client.servers.list(
            search_opts={'all_tenants': True, 'host': host})
        return sorted(servers, key=lambda server: server.name)[index]

    def wait_for(self, server, status, host=None):
        def reached():
            now = self.nova_client.servers.get(server.id)
            return (now.status == status and
                    getattr(now, 'OS-EXT-STS:task_state') is None and
                    host in (None, getattr(now, 'OS-EXT-SRV-ATTR:host')))
        return commands.wait_until(reached)

    def events(self, server):
        return [row['event'] for row in self.database.query(
            'SELECT e.event FROM instance_actions_events e JOIN '
            'instance_actions a ON e.action_id = a.id WHERE '
            'a.instance_uuid = ? ORDER BY e.id', server.id)]

    def assert_no_server_busy(self):
        self.assertEqual([], self.database.query(
            'SELECT uuid, task_state FROM instances WHERE task_state IS NOT '
            'NULL'))


class TestTasksOnTheirCast(RPCTasksTestCase):

    def test_stop_and_start_on_the_second_host_of_the_agent(self):
        server = self.server_of('rpc-2')

        self.nova_client.servers.stop(server)
        self.assertTrue(self.wait_for(server, 'SHUTOFF'), self.agent.log())
        self.nova_client.servers.start(server)
        self.assertTrue(self.wait_for(server, 'ACTIVE'), self.agent.log())

        self.assertEqual(['compute_stop_instance', 'compute_start_instance'],
                         self.events(server))
        self.assertEqual(['rpc-1'], sorted({
            row['rpc_server'] for row in self.database.services(
                binary='nova-compute')}))

    def test_an_evacuation_is_rebuilt_on_its_cast(self):
        nova = self.nova('2.11')
        nova.services.force_down('rpc-1', 'nova-compute', True)
        server = self.server_of('rpc-1')

        self.nova_client.servers.evacuate(server)

        self.assertTrue(self.wait_for(server, 'ACTIVE', host='rpc-2'),
                        self.agent.log())
        self.assertEqual(['compute_rebuild_instance'], self.events(server))
        [migration] = self.database.query('SELECT status FROM migrations')
        self.assertEqual('done', migration['status'])

    def test_a_duplicate_cast_is_carried_out_once(self):
        server = self.server_of('rpc-1')
        conf = nf_conf.make_conf([], default_config_files=[],
                                 default_config_dirs=[])
        rpc_transport.register_opts(conf)
        conf.set_override('transport_url', self.vhost.url())
        transport = rpc_transport.get_transport(conf)
        self.addCleanup(transport.cleanup)
        again = rpc_compute.ComputeAPI(transport)

        self.nova_client.servers.stop(server)
        for _ in range(3):
            again.stop_instance(nf_context.get_admin_context(), 'rpc-1',
                                server.id)

        self.assertTrue(self.wait_for(server, 'SHUTOFF'), self.agent.log())
        self.nova_client.servers.start(server)
        self.assertTrue(self.wait_for(server, 'ACTIVE'), self.agent.log())
        self.assertEqual(['compute_stop_instance', 'compute_start_instance'],
                         self.events(server))
        self.assertNotIn('cleared meanwhile', self.agent.log())


class TestALostCast(RPCTasksTestCase):
    """The API has no transport: every cast is lost, the agent looks."""

    RECONCILE_INTERVAL = 1

    def api_config_files(self):
        return self.database_config_and_vhost()

    def test_the_agents_look_finds_the_task(self):
        server = self.server_of('rpc-2')

        self.nova_client.servers.stop(server)

        self.assertTrue(self.wait_for(server, 'SHUTOFF'), self.agent.log())
        self.assertEqual(['compute_stop_instance'], self.events(server))


class TestBrokerCut(RPCTasksTestCase):
    """The agent reaches the broker through a proxy the test cuts."""

    RECONCILE_INTERVAL = 2

    def setUp(self):
        self.proxy = self.useFixture(
            tcp_proxy.TCPProxy(rabbitmq.BROKER[1]))
        super().setUp()

    def start_agent(self, *args, **kwargs):
        return super().start_agent(
            *args, url=self.vhost.url(self.proxy.port), **kwargs)

    def test_no_task_is_lost_and_none_stays_stuck(self):
        first, second = self.server_of('rpc-1'), self.server_of('rpc-2')
        self.nova_client.servers.stop(first)
        self.assertTrue(self.wait_for(first, 'SHUTOFF'), self.agent.log())

        self.proxy.cut()
        self.nova_client.servers.stop(second)
        self.assertTrue(self.wait_for(second, 'SHUTOFF'), self.agent.log())
        self.proxy.restore()
        self.nova_client.servers.start(first)
        self.nova_client.servers.start(second)

        self.assertTrue(self.wait_for(first, 'ACTIVE'), self.agent.log())
        self.assertTrue(self.wait_for(second, 'ACTIVE'), self.agent.log())
        for server in (first, second):
            self.assertEqual(
                ['compute_stop_instance', 'compute_start_instance'],
                self.events(server))
        self.assert_no_server_busy()
        self.assertNotIn('Traceback', self.agent.log())


class TestAPIWithoutBroker(RPCTasksTestCase):
    """The API's broker address is a closed port; the agent's is right."""

    RECONCILE_INTERVAL = 1

    def api_config_files(self):
        return self.database_config_and_vhost() + [
            self.rpc_config('rpc-api.conf',
                            self.vhost.url(processes.free_port()))]

    def test_the_api_answers_and_the_task_is_done(self):
        servers = self.server_of('rpc-1'), self.server_of('rpc-2')

        for server in servers:
            self.nova_client.servers.stop(server)

        for server in servers:
            self.assertTrue(self.wait_for(server, 'SHUTOFF'),
                            self.agent.log())
            self.assertEqual(['compute_stop_instance'], self.events(server))
        self.assertTrue(commands.wait_until(
            lambda: 'Cannot tell the agents of their tasks' in
            self.api.output()))
        self.assertEqual(1, self.api.output().count(
            'Cannot tell the agents of their tasks'))
        self.assertNotIn('Traceback', self.api.output())


class TestAgentRefusedByBroker(RPCTasksTestCase):
    """The agent's broker credentials are wrong; the API's are right."""

    RECONCILE_INTERVAL = 1

    def start_agent(self, *args, **kwargs):
        url = self.vhost.url().replace('guest:guest@', 'guest:wrong@')
        return super().start_agent(*args, url=url, **kwargs)

    def test_one_line_says_so_and_the_agents_look_does_the_task(self):
        server = self.server_of('rpc-2')

        self.nova_client.servers.stop(server)

        self.assertTrue(self.wait_for(server, 'SHUTOFF'), self.agent.log())
        self.assertEqual(['compute_stop_instance'], self.events(server))
        log = self.agent.log()
        self.assertEqual(1, log.count(
            'ERROR nova_forcedown.compute.manager'), log)
        self.assertIn('Cannot listen for tasks at compute.rpc-1 on '
                      'rabbit://127.0.0.1:%d/%s: ' % (
                          rabbitmq.BROKER[1], self.vhost.name), log)
        self.assertIn('ACCESS_REFUSED', log)
        self.assertIn('Fix [DEFAULT] transport_url and restart the agent; '
                      'until then its tasks are found in the database every '
                      '1.0 s.', log)
        self.assertNotIn('Traceback', log)
