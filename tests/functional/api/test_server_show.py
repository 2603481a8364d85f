"""A server shown reads itself and its tags in one statement (2.26+).

Its entry must be the one the detailed listing gives, which reads the
tags of its page apart: the same tags in the same order, and every other
field the same.
"""

from oslo_serialization import jsonutils
import testtools

from nova_forcedown.api import deploy
from nova_forcedown import context
from nova_forcedown.db import engine as db_engine
from nova_forcedown.db import tags as db_tags
from tests.fixtures import api_app
from tests.fixtures import api_world
from tests.fixtures import configuration

ADMIN = {'X-Auth-Token': 'admin:' + api_world.ADMIN_PROJECT}
USER = {'X-Auth-Token': 'user:' + api_world.USER_PROJECT}


@db_engine.writer
def _tag(context, uuid, tags):
    db_tags.add(context, uuid, tags)


class TestServerShownWithItsTags(testtools.TestCase):

    def setUp(self):
        super().setUp()
        world = self.useFixture(api_app.ApiWorld(
            api_world.COMPUTE_HOSTS, api_world.ZONES, api_world.SERVERS))
        self.ids = world.ids
        _tag(context.get_admin_context(), self.ids['WEB1_UUID'],
             ['zeta', 'alpha', 'mid'])
        self.app = deploy.load_app(configuration.api_conf())

    def _get(self, path, version, headers=ADMIN):
        return api_app.call_app(self.app, 'GET', '/v2.1' + path, version,
                                headers=headers)

    def _listed(self, version):
        body = self._get('/servers/detail?all_tenants=1', version).json_body
        return {server['id']: server for server in body['servers']}

    def test_a_server_shown_is_its_listing_entry(self):
        for version in ('2.26', '2.100'):
            listed = self._listed(version)
            for uuid, entry in listed.items():
                shown = self._get('/servers/%s' % uuid, version)
                self.assertEqual(200, shown.status_int)
                server = jsonutils.loads(shown.body)['server']
                # Only a server shown has its groups (2.71), as in Nova.
                server.pop('server_groups', None)
                self.assertEqual(entry, server)
            self.assertEqual(['alpha', 'mid', 'zeta'],
                             listed[self.ids['WEB1_UUID']]['tags'])
            self.assertEqual([], listed[self.ids['WEB2_UUID']]['tags'])

    def test_no_tags_before_2_26(self):
        shown = self._get('/servers/%s' % self.ids['WEB1_UUID'], '2.25')
        self.assertNotIn('tags', shown.json_body['server'])

    def test_another_projects_server_is_not_found(self):
        shown = self._get('/servers/%s' % self.ids['DB1_UUID'], '2.100',
                          headers=USER)
        self.assertEqual(404, shown.status_int)
        shown = self._get('/servers/%s' % self.ids['WEB1_UUID'], '2.100',
                          headers=USER)
        self.assertEqual(['alpha', 'mid', 'zeta'],
                         shown.json_body['server']['tags'])
