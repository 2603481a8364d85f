"""End to end: the ``openstack`` command as an operator types it.

The real API server takes Keystone tokens from a real Keystone on loopback
(``openstack server list`` needs an identity v3 service: an admin token on
one endpoint stops it before it calls the compute API), whose catalog names
the API as the compute endpoint. A fake-driver agent registers two hosts
with three servers each, as in the README's walkthrough. Each command runs
as a subprocess with an admin's openrc variables and ``-f json``, and the
tests read what it prints.
"""

import ipaddress
import json
import os
import subprocess

from nova_forcedown.compute.drivers import fake
from tests.fixtures import keystone_server
from tests.fixtures import nova_stand_ins
from tests.fixtures import processes
from tests.functional.e2e import test_end_to_end_servers

FAILED_HOST = test_end_to_end_servers.FAILED_HOST
OWNER = test_end_to_end_servers.OWNER
CLASSIC = ['m1.tiny', 'm1.small', 'm1.medium', 'm1.large', 'm1.xlarge']
# The vm_state of a server whose status is this, once no task runs.
_VM_STATES = {'ACTIVE': 'active', 'SHUTOFF': 'stopped'}


class CliTestCase(test_end_to_end_servers.ServersTestCase):
    """One Keystone per class; per test an API, its catalog entry, hosts."""

    @classmethod
    def setUpClass(cls):
        super().setUpClass()
        cls.keystone = keystone_server.KeystoneServer()
        cls.keystone.setUp()
        cls.addClassCleanup(cls.keystone.cleanUp)

    def setUp(self):
        super().setUp()
        self.addCleanup(self.keystone.add_compute_endpoint(
            self.endpoint + '/v2.1'))

    def api_config_files(self):
        return super().api_config_files() + self.keystone.api_config_files()

    def run_client(self, command, *args):
        """The finished ``command ARGS`` (openstack, nova), as an admin.

        The environment is this one without its OS_* variables (the test
        runner's included), plus the admin's openrc.
        """
        environment = {name: value for name, value in os.environ.items()
                       if not name.startswith('OS_')}
        environment.update(self.keystone.admin_environment())
        return subprocess.run(
            [processes.script(command), *args], capture_output=True,
            text=True, timeout=120, stdin=subprocess.DEVNULL,
            env=environment)

    def client_output(self, command, *args):
        """What ``command ARGS`` prints; a failed command fails the test."""
        result = self.run_client(command, *args)
        self.assertEqual(0, result.returncode,
                         '%s %s:\n%s%s\nAPI log:\n%s' % (
                             command, ' '.join(args), result.stdout,
                             result.stderr, self.api.output()[-3000:]))
        return result.stdout

    def openstack(self, *args):
        return self.client_output('openstack', *args)

    def openstack_json(self, *args):
        return json.loads(self.openstack(*args, '-f', 'json'))

    def servers_of(self, host):
        return self.openstack_json('server', 'list', '--all-projects',
                                   '--host', host, '--long')

    def server(self, server_id):
        return self.openstack_json('server', 'show', server_id)

    def wait_until_settled(self, server_ids, status):
        """Whether the servers reached ``status`` with no task running.

        The waits read the database, the tests' assertions the commands:
        each ``openstack`` run is a second or two of CPU, which a wait
        polling through it would take from the API and agents under test.
        """
        wanted = (_VM_STATES[status], None)
        marks = ', '.join('?' * len(server_ids))
        return processes.wait_until(lambda: all(
            (row['vm_state'], row['task_state']) == wanted
            for row in self.database.query(
                'SELECT vm_state, task_state FROM instances '
                'WHERE uuid IN (%s)' % marks, *server_ids)))


class TestServersWithTheCli(CliTestCase):

    def test_a_hosts_servers_with_the_long_columns(self):
        servers = self.servers_of(FAILED_HOST)

        self.assertEqual(['e2e-1-server-3', 'e2e-1-server-2',
                          'e2e-1-server-1'],
                         [server['Name'] for server in servers])
        for server in servers:
            self.assertEqual(
                ('ACTIVE', FAILED_HOST, OWNER, 'm1.medium', 'nova', 'UP'),
                (server['Status'], server['Host'], server['Project ID'],
                 server['Flavor'], server['Availability Zone'],
                 server['Host Status']))
            # No image service here to name the fake driver's image: the
            # CLI shows its id.
            self.assertEqual(fake.IMAGE_ID, server['Image ID'])
        # Each fake server has an address of its own on network private.
        addresses = [ipaddress.ip_address(address)
                     for server in servers
                     for address in server['Networks']['private']]
        self.assertEqual(3, len(set(addresses)))
        self.assertTrue(all(address in fake.SERVER_ADDRESSES
                            for address in addresses))

    def test_show_a_server_by_id(self):
        (listed, *_) = self.servers_of(FAILED_HOST)
        server = self.server(listed['ID'])

        self.assertEqual(
            (listed['Name'], 'ACTIVE', 'active', FAILED_HOST, FAILED_HOST,
             'UP', False, OWNER),
            (server['name'], server['status'],
             server['OS-EXT-STS:vm_state'], server['OS-EXT-SRV-ATTR:host'],
             server['OS-EXT-SRV-ATTR:hypervisor_hostname'],
             server['host_status'], server['locked'], server['project_id']))

    def test_forcing_the_host_down_shows_in_its_servers(self):
        self.openstack('compute', 'service', 'set', '--down', FAILED_HOST,
                       'nova-compute')

        self.assertEqual({'DOWN'}, {server['Host Status'] for server in
                                    self.servers_of(FAILED_HOST)})
        self.assertEqual({'UP'}, {server['Host Status'] for server in
                                  self.servers_of('e2e-2')})

    def test_without_all_projects_only_the_admins_own_servers(self):
        # The servers belong to another project than the admin's.
        self.assertEqual([], self.openstack_json('server', 'list'))

    def test_flavor_list_and_show(self):
        flavors = self.openstack_json('flavor', 'list')
        self.assertEqual(CLASSIC, [flavor['Name'] for flavor in flavors])

        small = self.openstack_json('flavor', 'show', 'm1.small')
        self.assertEqual(('2', 2048, 1, 20, True),
                         (small['id'], small['ram'], small['vcpus'],
                          small['disk'], small['os-flavor-access:is_public']))


class TestServerActionsWithTheCli(CliTestCase):

    def wait_for_status(self, server_id, status):
        """The server as shown once its status is ``status``.

        Stop and start may finish after the command returns, as in Nova.
        """
        self.wait_until_settled([server_id], status)
        shown = self.server(server_id)
        self.assertEqual(status, shown['status'])
        return shown

    def test_lock_and_unlock(self):
        (listed, *_) = self.servers_of(FAILED_HOST)
        self.openstack('server', 'lock', '--reason', 'fenced', listed['ID'])
        server = self.server(listed['ID'])
        self.assertEqual((True, 'fenced'),
                         (server['locked'], server['locked_reason']))

        self.openstack('server', 'unlock', listed['ID'])
        self.assertFalse(self.server(listed['ID'])['locked'])
        events = self.openstack_json('server', 'event', 'list',
                                     listed['ID'])
        self.assertEqual(['unlock', 'lock'],
                         [event['Action'] for event in events])

    def test_stop_and_start(self):
        (listed, *_) = self.servers_of(FAILED_HOST)
        self.openstack('server', 'stop', listed['ID'])
        server = self.wait_for_status(listed['ID'], 'SHUTOFF')
        self.assertEqual('stopped', server['OS-EXT-STS:vm_state'])

        self.openstack('server', 'start', listed['ID'])
        server = self.wait_for_status(listed['ID'], 'ACTIVE')
        self.assertEqual('active', server['OS-EXT-STS:vm_state'])

    def test_set_state_error(self):
        (listed, *_) = self.servers_of(FAILED_HOST)
        self.openstack('server', 'set', '--state', 'error', '--auto-approve',
                       listed['ID'])
        server = self.server(listed['ID'])
        self.assertEqual(('ERROR', 'error'),
                         (server['status'], server['OS-EXT-STS:vm_state']))
        self.assertEqual(['ERROR'], [
            other['Status'] for other in self.servers_of(FAILED_HOST)
            if other['ID'] == listed['ID']])


class TestServerPropertiesWithTheCli(CliTestCase):
    """What an operator tags for Masakari: ``server set --property``."""

    def test_set_show_and_unset_properties(self):
        (listed, *_) = self.servers_of(FAILED_HOST)
        self.openstack('server', 'set', '--property', 'HA_Enabled=True',
                       '--property', 'rack=r1', listed['ID'])
        self.assertEqual({'HA_Enabled': 'True', 'rack': 'r1'},
                         self.server(listed['ID'])['properties'])

        self.openstack('server', 'unset', '--property', 'rack', listed['ID'])
        self.assertEqual({'HA_Enabled': 'True'},
                         self.server(listed['ID'])['properties'])

    def test_a_refused_property_says_why(self):
        (listed, *_) = self.servers_of(FAILED_HOST)
        result = self.run_client('openstack', 'server', 'set', '--property',
                                 'rack/row=1', listed['ID'])

        self.assertNotEqual(0, result.returncode)
        self.assertIn("'rack/row' does not match any of the regexes",
                      result.stderr)
        self.assertEqual({}, self.server(listed['ID'])['properties'])


class TestFlavorAccessWithTheCli(CliTestCase):
    """Private flavors shared with projects, by name as operators do."""

    def test_create_private_share_show_and_unshare(self):
        service = self.keystone.admin.identity.find_project('service').id
        self.openstack('flavor', 'create', '--private', '--project',
                       'admin', '--ram', '256', '--vcpus', '1', '--disk',
                       '1', 'ops.small')
        admin = self.keystone.admin.identity.find_project('admin').id
        self.assertEqual([admin], self.openstack_json(
            'flavor', 'show', 'ops.small')['access_project_ids'])

        self.openstack('flavor', 'set', '--project', 'service', 'ops.small')
        self.assertEqual(sorted([admin, service]), sorted(self.openstack_json(
            'flavor', 'show', 'ops.small')['access_project_ids']))

        self.openstack('flavor', 'unset', '--project', 'admin', 'ops.small')
        self.assertEqual([service], self.openstack_json(
            'flavor', 'show', 'ops.small')['access_project_ids'])

    def test_sharing_twice_says_so(self):
        self.openstack('flavor', 'create', '--private', '--ram', '256',
                       '--vcpus', '1', '--disk', '1', 'ops.tiny')
        self.openstack('flavor', 'set', '--project', 'service', 'ops.tiny')
        result = self.run_client('openstack', 'flavor', 'set', '--project',
                                 'service', 'ops.tiny')

        self.assertNotEqual(0, result.returncode)
        self.assertIn('Flavor access already exists for flavor', result.stderr)


class TestEvacuationWithTheCli(CliTestCase):
    """``openstack server evacuate`` and ``nova host-evacuate``.

    Once the host is forced down, as an operator recovers a fenced host.
    """

    def test_evacuate_one_server_then_the_rest_of_the_host(self):
        servers = self.servers_of(FAILED_HOST)
        refused = self.run_client('openstack', 'server', 'evacuate',
                                  servers[0]['ID'])
        self.assertNotEqual(0, refused.returncode)
        self.assertIn('Compute service of %s is still in use' % FAILED_HOST,
                      refused.stderr)

        self.openstack('compute', 'service', 'set', '--down', FAILED_HOST,
                       'nova-compute')
        self.openstack('server', 'evacuate', servers[0]['ID'])
        self.assertEqual('e2e-2', self.server(
            servers[0]['ID'])['OS-EXT-SRV-ATTR:host'])
        self.client_output('nova', 'host-evacuate', FAILED_HOST)

        # Both clients ask for 2.95 or later: an evacuated server ends
        # stopped there, once the destination's agent rebuilt it.
        evacuated = {server['ID'] for server in servers}
        self.wait_until_settled(sorted(evacuated), 'SHUTOFF')
        self.assertEqual([], self.servers_of(FAILED_HOST))
        self.assertEqual(6, len(self.servers_of('e2e-2')))
        self.assertEqual({'SHUTOFF'}, {
            server['Status'] for server in self.servers_of('e2e-2')
            if server['ID'] in evacuated})
        migrations = self.openstack_json('server', 'migration', 'list',
                                         '--type', 'evacuation')
        self.assertEqual(3, len(migrations))


class TestServerCreateWithTheCli(CliTestCase):
    """The catalog also has an image service, the Glance stand-in.

    The CLIs look the image up there, and so does the API. ``--nic none``,
    not ``--network none``: the CLI looks the latter up as a network named
    "none" (in Nova's os-networks, without a network service).
    """

    def setUp(self):
        super().setUp()
        images = self.useFixture(nova_stand_ins.StandIns())
        self.addCleanup(self.keystone.add_image_endpoint(images.glance_url))
        self.openstack('compute', 'service', 'set', '--down', FAILED_HOST,
                       'nova-compute')

    def test_create_wait_and_delete_with_openstack(self):
        server = self.openstack_json(
            'server', 'create', '--flavor', 'm1.tiny', '--image',
            nova_stand_ins.IMAGE_ID, '--nic', 'none', '--wait', 'web')

        self.assertEqual(('ACTIVE', 'e2e-2', 'real-nova-image'),
                         (server['status'], server['OS-EXT-SRV-ATTR:host'],
                          server['image'].split(' ')[0]))
        self.openstack('server', 'delete', '--wait', server['id'])
        self.assertEqual([], self.database.query(
            'SELECT id FROM instances WHERE uuid = ? AND deleted = 0',
            server['id']))

    def test_boot_and_delete_with_nova(self):
        output = self.client_output(
            'nova', 'boot', '--flavor', 'm1.tiny', '--image',
            nova_stand_ins.IMAGE_ID, '--nic', 'none', '--poll', 'batch')

        self.assertIn('Server building... 100% complete', output)
        (row,) = self.database.query(
            "SELECT uuid, host, vm_state FROM instances "
            "WHERE display_name = 'batch'")
        self.assertEqual(('e2e-2', 'active'), (row['host'], row['vm_state']))
        self.client_output('nova', 'delete', row['uuid'])

    def test_an_image_the_service_does_not_have_is_refused(self):
        result = self.run_client(
            'openstack', 'server', 'create', '--flavor', 'm1.tiny',
            '--image', nova_stand_ins.MISSING_IMAGE_ID, '--nic', 'none',
            'nowhere')

        self.assertNotEqual(0, result.returncode)
        self.assertEqual([], self.database.query(
            "SELECT id FROM instances WHERE display_name = 'nowhere'"))
