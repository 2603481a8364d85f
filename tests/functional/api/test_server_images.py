"""A new server's image, read from an image service when there is one.

The API runs with ``noauth2`` and ``[glance] endpoint_override`` naming
the Glance stand-in of tests/fixtures/nova_stand_ins.py, whose every image
is active but three: one missing, one queued, one too big for any flavor
here. host1 of the compute hosts takes servers.
"""

import testtools

from nova_forcedown.api import deploy
from tests.fixtures import api_app
from tests.fixtures import api_world
from tests.fixtures import configuration
from tests.fixtures import nova_stand_ins
from tests.fixtures import processes

TOKEN = 'admin:' + api_world.ADMIN_PROJECT


class TestImagesFromTheImageService(testtools.TestCase):

    def setUp(self):
        super().setUp()
        self.world = self.useFixture(api_app.ApiWorld(
            api_world.COMPUTE_HOSTS, api_world.FLAVORS))
        self.glance = self.useFixture(nova_stand_ins.StandIns())
        self.app = deploy.load_app(configuration.api_conf(**{
            'glance.endpoint_override': self.glance.glance_url}))

    def create(self, image, app=None, version='2.98'):
        return api_app.call_app(
            app or self.app, 'POST', '/v2.1/servers', version,
            body={'server': {'name': 'web', 'flavorRef': '1',
                             'imageRef': image, 'networks': 'none'}},
            headers={'X-Auth-Token': TOKEN})

    def show(self, server_id):
        return api_app.call_app(
            self.app, 'GET', '/v2.1/servers/' + server_id, '2.98',
            headers={'X-Auth-Token': TOKEN}).json['server']

    def server_count(self):
        response = api_app.call_app(
            self.app, 'GET', '/v2.1/servers?all_tenants=1', '2.1',
            headers={'X-Auth-Token': TOKEN})
        return len(response.json['servers'])

    def assertRefused(self, status, message, response):
        self.assertEqual(status, response.status_int, response.body)
        (fault,) = response.json.values()
        self.assertEqual(message, fault['message'])

    def test_an_active_image_is_read_and_its_properties_kept(self):
        response = self.create(nova_stand_ins.IMAGE_ID)

        self.assertEqual(202, response.status_int, response.body)
        image = self.show(response.json['server']['id'])['image']
        self.assertEqual(nova_stand_ins.IMAGE_ID, image['id'])
        self.assertEqual('cirros', image['properties']['os_distro'])
        self.assertIn(('glance', 'GET',
                       '/v2/images/' + nova_stand_ins.IMAGE_ID, 200),
                      self.glance.requests)

    def test_an_image_the_service_does_not_have(self):
        image = nova_stand_ins.MISSING_IMAGE_ID
        self.assertRefused(400, 'Can not find requested image',
                           self.create(image))
        self.assertEqual(2, self.server_count())

    def test_an_image_that_is_not_active(self):
        image = nova_stand_ins.QUEUED_IMAGE_ID
        self.assertRefused(400, 'Image %s is not active.' % image,
                           self.create(image))

    def test_an_image_bigger_than_the_flavor(self):
        self.assertRefused(
            400, "Flavor's memory is too small for requested image.",
            self.create(nova_stand_ins.LARGE_IMAGE_ID))

    def test_an_image_service_that_does_not_answer_writes_nothing(self):
        app = deploy.load_app(configuration.api_conf(**{
            'glance.endpoint_override': 'http://127.0.0.1:%d' %
            processes.free_port(), 'glance.timeout': 2}))

        response = self.create(nova_stand_ins.IMAGE_ID, app=app)

        self.assertEqual(503, response.status_int, response.body)
        self.assertIn('The image service is unavailable',
                      response.json['serviceUnavailable']['message'])
        self.assertEqual(2, self.server_count())

    def test_without_an_image_service_any_uuid_is_an_image(self):
        app = deploy.load_app(configuration.api_conf())

        response = self.create(nova_stand_ins.MISSING_IMAGE_ID, app=app)

        self.assertEqual(202, response.status_int, response.body)
        self.assertEqual([], [request for request in self.glance.requests
                              if request[0] == 'glance'])
