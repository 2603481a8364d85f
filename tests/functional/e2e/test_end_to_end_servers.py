"""End to end: a host's servers through the real API server, listed and
read with python-novaclient and openstacksdk as Masakari, fence_evacuate
and `openstack server list --all-projects --host` do, from the instances a
real fake-driver agent registered."""

import time

from novaclient import exceptions as nova_exceptions
import openstack

from tests.fixtures import commands
from tests.functional.e2e import test_end_to_end

OWNER = 'fedcba9876543210fedcba9876543210'
FAILED_HOST = 'e2e-1'


class ServersTestCase(test_end_to_end.EndToEndTestCase):

    def setUp(self):
        super().setUp()
        self.agent = self.start_agent(
            '--driver', 'fake', '--hosts', '2', '--instances', '3',
            '--host-prefix', 'e2e-', '--project-id', OWNER)
        # The agent registers its servers after its services.
        self.assertTrue(commands.wait_until(lambda: len(self.database.query(
            'SELECT id FROM instances')) == 6), self.agent.log())


class TestServersWithNovaclient(ServersTestCase):

    def test_masakari_lists_and_reads_a_failed_hosts_servers(self):
        nova = self.nova('2.53')
        servers = nova.servers.list(
            search_opts={'all_tenants': True, 'host': FAILED_HOST})

        self.assertEqual(['e2e-1-server-3', 'e2e-1-server-2',
                          'e2e-1-server-1'],
                         [server.name for server in servers])
        for server in servers:
            self.assertEqual(
                (FAILED_HOST, FAILED_HOST, 'active', 'ACTIVE', OWNER, False),
                (getattr(server, 'OS-EXT-SRV-ATTR:host'),
                 getattr(server, 'OS-EXT-SRV-ATTR:hypervisor_hostname'),
                 getattr(server, 'OS-EXT-STS:vm_state'), server.status,
                 server.tenant_id, server.locked))
            self.assertEqual('m1.medium', server.flavor['original_name'])
        server = nova.servers.get(servers[0].id)
        self.assertEqual(servers[0].name, server.name)
        self.assertEqual('UP', server.host_status)

    def test_a_servers_flavor_is_found_by_its_id_before_2_47(self):
        # Before 2.47 a server names its flavor by id only: clients read
        # the flavor itself, which the agent's servers must therefore
        # have (the development API's m1.medium).
        nova = self.nova('2.1')
        server = nova.servers.list(
            search_opts={'all_tenants': True, 'host': FAILED_HOST})[0]
        flavor = nova.flavors.get(server.flavor['id'])
        self.assertEqual(('m1.medium', 2, 4096, 40),
                         (flavor.name, flavor.vcpus, flavor.ram, flavor.disk))

    def test_fence_evacuate_sees_the_forced_down_host_at_once(self):
        nova = self.nova('2.11')
        nova.services.force_down(FAILED_HOST, 'nova-compute', True)
        nova = self.nova('2.16')
        by_host = {}
        for server in nova.servers.list(search_opts={'all_tenants': 1}):
            by_host.setdefault(getattr(server, 'OS-EXT-SRV-ATTR:host'),
                               set()).add(server.host_status)
        self.assertEqual({FAILED_HOST: {'DOWN'}, 'e2e-2': {'UP'}}, by_host)

    def test_own_project_only_without_all_tenants(self):
        nova = self.nova('2.53')
        self.assertEqual([], nova.servers.list())
        error = self.assertRaises(nova_exceptions.NotFound,
                                  nova.servers.get, 'no-such-server')
        self.assertEqual(404, error.code)


class TestServersWithOpenStackSDK(ServersTestCase):

    def test_all_projects_servers_of_a_host(self):
        conn = openstack.connection.Connection(session=self.session,
                                               compute_api_version='2')
        # openstacksdk names the host filter compute_host; an unknown
        # keyword such as host= is a client-side filter on the results.
        servers = list(conn.compute.servers(all_projects=True,
                                            compute_host=FAILED_HOST))

        self.assertEqual(3, len(servers))
        self.assertEqual({(FAILED_HOST, 'ACTIVE', OWNER)}, {
            (server.compute_host, server.status, server.project_id)
            for server in servers})
        server = conn.compute.get_server(servers[0].id)
        self.assertEqual((FAILED_HOST, 'UP', False, 'm1.medium'),
                         (server.hypervisor_hostname, server.host_status,
                          server.is_locked, server.flavor.original_name))


def _wait_for_status(read, status):
    """Whether ``read()`` (a server) reaches ``status`` within 30 s."""
    return commands.wait_until(lambda: read().status == status)


class TestServerActionsWithNovaclient(ServersTestCase):

    def test_lock_stop_start_unlock_and_the_history(self):
        nova = self.nova('2.73')
        server = nova.servers.list(
            search_opts={'all_tenants': True, 'host': FAILED_HOST})[0]

        nova.servers.lock(server, reason='fenced by the cluster')
        nova.servers.stop(server)
        self.assertTrue(_wait_for_status(
            lambda: nova.servers.get(server.id), 'SHUTOFF'))
        stopped = nova.servers.get(server.id)
        self.assertEqual((True, 'fenced by the cluster', 4, None),
                         (stopped.locked, stopped.locked_reason,
                          getattr(stopped, 'OS-EXT-STS:power_state'),
                          getattr(stopped, 'OS-EXT-STS:task_state')))
        nova.servers.start(server)
        self.assertTrue(_wait_for_status(
            lambda: nova.servers.get(server.id), 'ACTIVE'))
        nova.servers.unlock(server)
        nova.servers.reset_state(server, 'error')

        self.assertEqual('ERROR', nova.servers.get(server.id).status)
        actions = nova.instance_action.list(server)
        self.assertEqual(['resetState', 'unlock', 'start', 'stop', 'lock'],
                         [action.action for action in actions])
        stop = nova.instance_action.get(server, actions[3].request_id)
        self.assertEqual([('compute_stop_instance', FAILED_HOST, 'Success')],
                         [(event['event'], event['host'], event['result'])
                          for event in stop.events])

    def test_a_stop_waits_for_the_hosts_agent(self):
        self.agent.stop()
        nova = self.nova('2.53')
        server = nova.servers.list(
            search_opts={'all_tenants': True, 'host': FAILED_HOST})[0]

        nova.servers.stop(server)
        time.sleep(2)
        self.assertEqual('powering-off', getattr(
            nova.servers.get(server.id), 'OS-EXT-STS:task_state'))
        self.start_agent('--driver', 'fake', '--hosts', '2', '--instances',
                         '3', '--host-prefix', 'e2e-', '--project-id', OWNER)

        self.assertTrue(_wait_for_status(
            lambda: nova.servers.get(server.id), 'SHUTOFF'))

    def test_conflicts_are_novas(self):
        nova = self.nova('2.53')
        server = nova.servers.list(
            search_opts={'all_tenants': True, 'host': FAILED_HOST})[0]
        error = self.assertRaises(nova_exceptions.Conflict,
                                  nova.servers.start, server)
        self.assertEqual(
            "Cannot 'start' instance %s while it is in vm_state active"
            % server.id, error.message)


class TestServerActionsWithOpenStackSDK(ServersTestCase):

    def test_the_actions_masakari_sends(self):
        conn = openstack.connection.Connection(session=self.session,
                                               compute_api_version='2')
        server = next(conn.compute.servers(all_projects=True,
                                           compute_host=FAILED_HOST))

        conn.compute.lock_server(server, locked_reason='recovering')
        conn.compute.stop_server(server)
        stopped = conn.compute.wait_for_server(server, status='SHUTOFF',
                                               interval=0.2, wait=30)
        self.assertEqual((True, 'recovering'),
                         (stopped.is_locked, stopped.locked_reason))
        conn.compute.start_server(server)
        conn.compute.wait_for_server(server, status='ACTIVE', interval=0.2,
                                     wait=30)
        conn.compute.reset_server_state(server, 'error')
        conn.compute.unlock_server(server)

        server = conn.compute.get_server(server.id)
        self.assertEqual(('ERROR', False), (server.status, server.is_locked))
        actions = list(conn.compute.server_actions(server))
        self.assertEqual(['unlock', 'resetState', 'start', 'stop', 'lock'],
                         [action.action for action in actions])
        start = conn.compute.get_server_action(actions[2].request_id, server)
        self.assertEqual(['Success'],
                         [event.result for event in start.events])


class TestMasakariInstanceFailure(ServersTestCase):
    """Masakari's instance failure, ``process_all_instances = false``.

    Through novaclient at its microversion, it recovers a server only
    when its metadata has ``HA_Enabled=True``
    (masakari/engine/drivers/taskflow/instance_failure.py: stop the
    server unless skipped, start it, wait until it is active).
    """

    def masakari_recovers(self, nova, server_id):
        """The flow for one server; whether it recovered it."""
        server = nova.servers.get(server_id)
        if server.metadata.get('HA_Enabled', '').lower() != 'true':
            return False
        nova.servers.stop(server_id)
        self.assertTrue(_wait_for_status(
            lambda: nova.servers.get(server_id), 'SHUTOFF'))
        nova.servers.start(server_id)
        self.assertTrue(_wait_for_status(
            lambda: nova.servers.get(server_id), 'ACTIVE'))
        return True

    def test_only_the_servers_tagged_ha_enabled(self):
        nova = self.nova('2.53')
        tagged, untagged, *_ = nova.servers.list(
            search_opts={'all_tenants': True, 'host': FAILED_HOST})
        nova.servers.set_meta_item(tagged, 'HA_Enabled', 'True')
        nova.servers.set_meta(untagged, {'owner': 'ops'})

        self.assertEqual([True, False], [
            self.masakari_recovers(nova, server.id)
            for server in (tagged, untagged)])
        self.assertEqual(['start', 'stop'], [
            action.action for action in nova.instance_action.list(tagged)])
        self.assertEqual([], nova.instance_action.list(untagged))

    def test_an_operator_untags_a_server(self):
        nova = self.nova('2.53')
        server = nova.servers.list(
            search_opts={'all_tenants': True, 'host': FAILED_HOST})[0]
        nova.servers.set_meta(server, {'HA_Enabled': 'True', 'rack': 'r1'})
        nova.servers.delete_meta(server, ['HA_Enabled'])

        self.assertEqual({'rack': 'r1'}, nova.servers.get(server.id).metadata)
        self.assertFalse(self.masakari_recovers(nova, server.id))


class TestServerMetadataWithOpenStackSDK(ServersTestCase):

    def test_set_read_and_delete(self):
        conn = openstack.connection.Connection(session=self.session,
                                               compute_api_version='2')
        server = next(conn.compute.servers(all_projects=True,
                                           compute_host=FAILED_HOST))

        conn.compute.set_server_metadata(server, HA_Enabled='True',
                                         rack='r1')
        conn.compute.delete_server_metadata(server, ['rack'])

        self.assertEqual({'HA_Enabled': 'True'},
                         conn.compute.get_server_metadata(server).metadata)
        self.assertEqual({'HA_Enabled': 'True'},
                         conn.compute.get_server(server.id).metadata)
