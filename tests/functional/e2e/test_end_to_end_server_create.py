"""End to end: servers created and deleted through the real API server,
with python-novaclient (the agent polling the database) and openstacksdk
(the agent told over RabbitMQ), spawned and destroyed by a real fake-driver
agent of three hosts, one of them forced down."""

from novaclient import exceptions as nova_exceptions
import openstack

from tests.fixtures import commands
from tests.functional.e2e import test_end_to_end
from tests.functional.e2e import test_rpc_tasks

IMAGE = '6a3e9d52-7c1f-4b8e-9f2d-0e5b4c3a2d10'
FORCED = 'new-3'
HOSTS = ('new-1', 'new-2')


class _Creates:

    def setUp(self):
        super().setUp()
        self.agent = self.start_agent('--driver', 'fake', '--hosts', '3',
                                      '--instances', '0',
                                      '--host-prefix', 'new-')
        self.assertTrue(commands.wait_until(lambda: len(
            self.database.services(binary='nova-compute')) == 3),
            self.agent.log())
        self.nova('2.11').services.force_down(FORCED, 'nova-compute', True)

    def live_rows(self):
        return self.database.query(
            'SELECT host, vm_state FROM instances WHERE deleted = 0')


class TestCreateWithNovaclient(_Creates,
                               test_end_to_end.EndToEndTestCase):

    def test_servers_are_built_on_up_hosts_then_deleted(self):
        nova = self.nova('2.74')
        servers = [nova.servers.create('web-%d' % index, IMAGE, '1',
                                       nics='none')
                   for index in range(4)]

        self.assertTrue(commands.wait_until(lambda: {
            nova.servers.get(server.id).status
            for server in servers} == {'ACTIVE'}, timeout=60),
            self.agent.log())
        hosts = {getattr(nova.servers.get(server.id), 'OS-EXT-SRV-ATTR:host')
                 for server in servers}
        self.assertLessEqual(hosts, set(HOSTS))
        self.assertEqual({}, nova.servers.get(servers[0].id).addresses)

        for server in servers:
            nova.servers.delete(server.id)
        self.assertTrue(commands.wait_until(
            lambda: not self.live_rows(), timeout=60), self.agent.log())
        error = self.assertRaises(nova_exceptions.NotFound,
                                  nova.servers.get, servers[0].id)
        self.assertEqual(404, error.code)

    def test_a_forced_down_host_named_by_an_admin_is_refused(self):
        nova = self.nova('2.74')
        server = nova.servers.create('pinned', IMAGE, '1', nics='none',
                                     host=FORCED)

        found = nova.servers.get(server.id)
        self.assertEqual('ERROR', found.status)
        self.assertIn('No valid host', found.fault['message'])


class TestCreateWithOpenStackSDKOverRPC(_Creates,
                                        test_rpc_tasks.OverRPC,
                                        test_end_to_end.EndToEndTestCase):

    def test_a_server_is_active_with_an_address_then_deleted(self):
        conn = openstack.connection.Connection(session=self.session,
                                               compute_api_version='2')
        server = conn.compute.create_server(
            name='sdk', image_id=IMAGE, flavor_id='1', networks='auto')
        server = conn.compute.wait_for_server(server, wait=60)

        self.assertIn(server.compute_host, HOSTS)
        self.assertEqual(['private'], list(server.addresses))

        conn.compute.delete_server(server)
        conn.compute.wait_for_delete(server, wait=60)
        self.assertEqual([], self.live_rows())


class TestDeletedSimulatedServerStaysDeleted(test_end_to_end.EndToEndTestCase):
    """A simulated server deleted through the API stays deleted.

    The agent restarted with the same flags does not make it again.
    """

    AGENT = ('--driver', 'fake', '--hosts', '1', '--instances', '3',
             '--host-prefix', 'sim-')

    def live_names(self):
        return sorted(row['display_name'] for row in self.database.query(
            'SELECT display_name FROM instances WHERE deleted = 0'))

    def test_the_agent_restarted_keeps_it_deleted(self):
        agent = self.start_agent(*self.AGENT)
        self.assertTrue(commands.wait_until(
            lambda: len(self.live_names()) == 3), agent.log())
        nova = self.nova('2.1')
        (gone,) = nova.servers.list(search_opts={
            'name': self.live_names()[0], 'all_tenants': 1})
        nova.servers.delete(gone.id)
        self.assertTrue(commands.wait_until(
            lambda: len(self.live_names()) == 2, timeout=60), agent.log())
        kept = self.live_names()
        self.assertEqual(0, agent.stop())

        agent = self.start_agent(*self.AGENT)
        self.wait_for_heartbeats(host='sim-1', beats=3)

        self.assertEqual(kept, self.live_names(), agent.log())
