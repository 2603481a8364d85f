"""Server listings of pages on more hosts than are looked up by name.

A page of servers on more than ``MAX_HOSTS_LOOKED_UP`` hosts reads every
compute service and every zone membership, not those of its hosts: the
answer must not change. The threshold is lowered to one host here, so
that the few hosts of the fixtures are "many".
"""

import fixtures
from oslo_serialization import jsonutils
import testtools

from nova_forcedown.api.controllers import servers
from nova_forcedown.api import deploy
from tests.fixtures import api_app
from tests.fixtures import api_world
from tests.fixtures import configuration

TOKEN = 'admin:' + api_world.ADMIN_PROJECT


class TestListingOnManyHosts(testtools.TestCase):

    def setUp(self):
        super().setUp()
        self.useFixture(api_app.ApiWorld(
            api_world.COMPUTE_HOSTS, api_world.ZONES, api_world.SERVERS))
        self.app = deploy.load_app(configuration.api_conf())

    def listing(self, version):
        response = api_app.call_app(
            self.app, 'GET', '/v2.1/servers/detail?all_tenants=1', version,
            headers={'X-Auth-Token': TOKEN})
        self.assertEqual(200, response.status_int)
        return response.body

    def test_every_host_read_at_once_gives_the_same_listing(self):
        versions = ('2.1', '2.16', '2.100')
        by_name = {version: self.listing(version) for version in versions}
        self.useFixture(fixtures.MonkeyPatch(
            'nova_forcedown.api.controllers.servers.MAX_HOSTS_LOOKED_UP', 1))
        self.assertEqual(1, servers.MAX_HOSTS_LOOKED_UP)
        for version in versions:
            self.assertEqual(by_name[version], self.listing(version))
        # The listing shows what the services and zones say.
        shown = jsonutils.loads(by_name['2.100'])['servers']
        self.assertLessEqual({'DOWN', 'UP'},
                             {server['host_status'] for server in shown})
        self.assertLessEqual(
            {'az1', 'az2'},
            {server['OS-EXT-AZ:availability_zone'] for server in shown})
