"""Server and instance action views against tempest's own response
schemas, at every window tempest's servers client knows, for an admin and
for a project member.

tempest's schemas forbid unknown keys and require each window's keys, so
a key shown too early, too late or with the wrong type fails here.
"""

from oslo_serialization import jsonutils
from oslotest import base
import testtools

from nova_forcedown.api import deploy
from tests.fixtures import api_app
from tests.fixtures import api_world
from tests.fixtures import configuration

try:
    from tempest.lib.api_schema.response.compute.v2_1 import (
        flavors_access as flavors_access_schemas)
    from tempest.lib.api_schema.response.compute.v2_1 import (
        servers as base_schemas)
    from tempest.lib.common import rest_client
    from tempest.lib.services.compute import migrations_client
    from tempest.lib.services.compute import servers_client
except ImportError:  # tempest is a test requirement; see the lead's note
    rest_client = None

ADMIN = 'admin:' + api_world.ADMIN_PROJECT
MEMBER = 'alice:' + api_world.USER_PROJECT
SERVERS = ('WEB1', 'WEB2', 'DB1', 'DB2', 'PENDING')


class _Response:
    def __init__(self, status):
        self.status = status


@testtools.skipIf(rest_client is None, 'tempest is not installed')
class TempestSchemasTest(base.BaseTestCase):

    def setUp(self):
        super().setUp()
        self.conf = configuration.api_conf()
        self.world = self.useFixture(api_app.ApiWorld(api_world.SEEDED))
        for part in (api_world.SERVERS, api_world.INSTANCE_ACTIONS,
                     api_world.MIGRATIONS):
            self.world.add(part)
        self.app = deploy.load_app(self.conf)

    def _get(self, path, version, token):
        resp = api_app.call_app(self.app, 'GET', '/v2.1' + path, version,
                                headers={'X-Auth-Token': token})
        self.assertEqual(200, resp.status_code, resp.body)
        return jsonutils.loads(resp.body)

    def _check(self, schema, path, version, token):
        body = self._get(path, version, token)
        try:
            rest_client.RestClient.validate_response(schema, _Response(200),
                                                     body)
        except Exception as exc:
            self.fail('%s at %s as %s: %s' % (path, version, token, exc))
        return body

    def _windows(self):
        versions = servers_client.ServersClient.schema_versions_info
        return [(info['min'] or '2.1', info['schema']) for info in versions]

    def test_every_window_for_admins_and_members(self):
        for version, schemas in self._windows():
            for token, query in ((ADMIN, '?all_tenants=1'), (MEMBER, '')):
                self._check(schemas.list_servers, '/servers' + query,
                            version, token)
                body = self._check(schemas.list_servers_detail,
                                   '/servers/detail' + query, version, token)
                self.assertTrue(body['servers'])
            for label in SERVERS:
                self._check(schemas.get_server,
                            '/servers/' + self.world.ids[label + '_UUID'],
                            version, ADMIN)
            self._check(schemas.get_server,
                        '/servers/' + self.world.ids['WEB1_UUID'], version,
                        MEMBER)

    def test_nova_maximum_is_the_last_window(self):
        schemas = self._windows()[-1][1]
        self._check(schemas.get_server,
                    '/servers/' + self.world.ids['DB2_UUID'], '2.104', ADMIN)
        self._check(schemas.list_servers_detail,
                    '/servers/detail?all_tenants=1&limit=2', '2.104', ADMIN)

    def test_instance_actions_at_every_window(self):
        actions = '/servers/%s/os-instance-actions' % self.world.ids[
            'WEB2_UUID']
        for version, schemas in self._windows():
            for token in (ADMIN, MEMBER):
                body = self._check(schemas.list_instance_actions, actions,
                                   version, token)
                self.assertEqual(2, len(body['instanceActions']))
                for request_id in ('req-web2-stop', 'req-web2-start'):
                    self._check(schemas.show_instance_action,
                                actions + '/' + request_id, version, token)

    def test_actions_the_api_records_at_every_window(self):
        server = '/v2.1/servers/%s' % self.world.ids['WEB1_UUID']
        for body in ({'lock': None}, {'unlock': None},
                     {'os-resetState': {'state': 'error'}}):
            resp = api_app.call_app(self.app, 'POST', server + '/action',
                                    '2.1', body=body,
                                    headers={'X-Auth-Token': ADMIN})
            self.assertEqual(202, resp.status_code, resp.body)
        actions = '/servers/%s/os-instance-actions' % self.world.ids[
            'WEB1_UUID']
        for version, schemas in self._windows():
            body = self._check(schemas.list_instance_actions, actions,
                               version, ADMIN)
            self.assertEqual(['resetState', 'unlock', 'lock'], [
                action['action'] for action in body['instanceActions']])
            for action in body['instanceActions']:
                self._check(schemas.show_instance_action,
                            actions + '/' + action['request_id'], version,
                            ADMIN)

    def test_a_server_with_a_fault_at_every_window(self):
        db2 = self.world.ids['DB2_UUID']
        for version, body in (('2.1', {'os-resetState': {'state': 'active'}}),
                              ('2.29', {'evacuate': {'host': 'host2'}})):
            resp = api_app.call_app(self.app, 'POST',
                                    '/v2.1/servers/%s/action' % db2, version,
                                    body=body,
                                    headers={'X-Auth-Token': ADMIN})
            self.assertIn(resp.status_code, (200, 202), resp.body)
        for version, schemas in self._windows():
            body = self._check(schemas.get_server, '/servers/' + db2,
                               version, ADMIN)
            self.assertEqual(500, body['server']['fault']['code'])
            self._check(schemas.list_servers_detail,
                        '/servers/detail?all_tenants=1&host=host4', version,
                        ADMIN)

    def test_server_metadata_for_admins_and_members(self):
        metadata = '/servers/%s/metadata' % self.world.ids['WEB1_UUID']
        calls = [
            ('GET', metadata, None, base_schemas.list_server_metadata),
            ('POST', metadata, {'metadata': {'rack': 'r1'}},
             base_schemas.update_server_metadata),
            ('PUT', metadata, {'metadata': {'rack': 'r2', 'row': '1'}},
             base_schemas.set_server_metadata),
            ('GET', metadata + '/rack', None,
             base_schemas.set_show_server_metadata_item),
            ('PUT', metadata + '/rack', {'meta': {'rack': 'r3'}},
             base_schemas.set_show_server_metadata_item),
            ('DELETE', metadata + '/rack', None,
             base_schemas.delete_server_metadata_item),
        ]
        for token in (ADMIN, MEMBER):
            for method, path, body, schema in calls:
                resp = api_app.call_app(self.app, method, '/v2.1' + path,
                                        '2.1', body=body,
                                        headers={'X-Auth-Token': token})
                answer = jsonutils.loads(resp.body) if resp.body else None
                try:
                    rest_client.RestClient.validate_response(
                        schema, _Response(resp.status_code), answer)
                except Exception as exc:
                    self.fail('%s %s as %s: %s' % (method, path, token, exc))

    def test_migrations_at_every_window(self):
        for info in migrations_client.MigrationsClient.schema_versions_info:
            version = info['min'] or '2.1'
            body = self._check(info['schema'].list_migrations,
                               '/os-migrations', version, ADMIN)
            self.assertEqual(1, len(body['migrations']))


@testtools.skipIf(rest_client is None, 'tempest is not installed')
class TempestFlavorAccessSchemaTest(base.BaseTestCase):
    """os-flavor-access and its two actions against tempest's schema."""

    def setUp(self):
        super().setUp()
        self.world = self.useFixture(api_app.ApiWorld())
        self.world.add(api_world.FLAVORS)
        self.app = deploy.load_app(configuration.api_conf())

    def test_list_add_and_remove(self):
        calls = [
            ('GET', '/flavors/shared/os-flavor-access', None),
            ('POST', '/flavors/shared/action',
             {'addTenantAccess': {'tenant': api_world.OTHER_PROJECT}}),
            ('POST', '/flavors/shared/action',
             {'removeTenantAccess': {'tenant': api_world.OTHER_PROJECT}}),
        ]
        for method, path, body in calls:
            resp = api_app.call_app(self.app, method, '/v2.1' + path, '2.7',
                                    body=body,
                                    headers={'X-Auth-Token': ADMIN})
            try:
                rest_client.RestClient.validate_response(
                    flavors_access_schemas.add_remove_list_flavor_access,
                    _Response(resp.status_code), jsonutils.loads(resp.body))
            except Exception as exc:
                self.fail('%s %s: %s' % (method, path, exc))
