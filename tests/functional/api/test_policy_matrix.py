"""Policy matrix: every endpoint x (admin, member, no token).

Also a policy.yaml override that takes effect without rebuilding the app,
granted to a custom role that noauth2 reads from X-Roles.
"""

import os
import shutil
import tempfile

from oslo_policy import opts as policy_opts
from oslo_serialization import jsonutils
from oslotest import base

from nova_forcedown.api import deploy
from nova_forcedown import context
from nova_forcedown.objects import service as service_obj
from nova_forcedown import policy
from tests.fixtures import api_app
from tests.fixtures import api_world
from tests.fixtures import configuration
from tests.fixtures import processes

ADMIN = 'admin:' + api_world.ADMIN_PROJECT
MEMBER = 'user:' + api_world.USER_PROJECT
FENCER = 'fencer:' + api_world.USER_PROJECT


# (method, path, version, body, status): endpoints whose rule lets any
# authenticated user in, unlike every endpoint of _endpoints(ids).
FOR_EVERYONE = [
    ('GET', '/v2.1/os-availability-zone', '2.1', None, 200),
    ('GET', '/v2/os-availability-zone', None, None, 200),
    # A project's readers list their own servers.
    ('GET', '/v2.1/servers', '2.1', None, 200),
    ('GET', '/v2.1/servers/detail', '2.100', None, 200),
    ('GET', '/v2.1/flavors', '2.1', None, 200),
    ('GET', '/v2.1/flavors/detail?is_public=None', '2.61', None, 200),
    ('GET', '/v2.1/flavors/1', '2.1', None, 200),
    ('GET', '/v2/flavors/detail', None, None, 200),
    # Readers of their own project, which noauth2's users are.
    ('GET', '/v2.1/flavors/2/os-extra_specs', '2.1', None, 200),
    ('GET', '/v2.1/flavors/2/os-extra_specs/evacuable', '2.1', None, 200),
]


def _endpoints(ids):
    """(method, path, version, body, admin status); run in this order.

    ``ids``: those of the rows of ``api_world.SEEDED``.

    Deletes come last and each removes a different service or aggregate,
    so the admin pass finds every row the earlier endpoints need.
    """
    host1 = {'host': 'host1', 'binary': 'nova-compute'}
    aggregate = '/v2.1/os-aggregates/' + ids['MATRIX_AGGREGATE_ID']
    return [
        ('GET', '/v2.1/os-aggregates', '2.1', None, 200),
        ('GET', '/v2/os-aggregates', None, None, 200),
        ('POST', '/v2.1/os-aggregates', '2.1',
         {'aggregate': {'name': 'made-by-the-matrix'}}, 200),
        ('GET', aggregate, '2.41', None, 200),
        ('PUT', aggregate, '2.1', {'aggregate': {'availability_zone': 'az1'}},
         200),
        ('POST', aggregate + '/action', '2.1',
         {'add_host': {'host': 'host2'}}, 200),
        ('POST', aggregate + '/action', '2.1',
         {'set_metadata': {'metadata': {'ssd': 'true'}}}, 200),
        ('POST', aggregate + '/action', '2.1',
         {'remove_host': {'host': 'host2'}}, 200),
        # No image service here: an admin learns the image is not found.
        ('POST', aggregate + '/images', '2.81',
         {'cache': [{'id': '9c6d7a5e-8f3b-4c2a-9e1d-0a1b2c3d4e5f'}]}, 400),
        ('POST', '/v2.1/flavors', '2.1',
         {'flavor': {'name': 'made-by-the-matrix', 'ram': 1, 'vcpus': 1,
                     'disk': 0}}, 200),
        ('PUT', '/v2.1/flavors/1', '2.55', {'flavor': {'description': 'x'}},
         200),
        ('POST', '/v2.1/flavors/1/os-extra_specs', '2.1',
         {'extra_specs': {'matrix': 'yes'}}, 200),
        ('PUT', '/v2.1/flavors/1/os-extra_specs/matrix', '2.1',
         {'matrix': 'still'}, 200),
        ('DELETE', '/v2.1/flavors/1/os-extra_specs/matrix', '2.1', None,
         200),
        ('GET', '/v2.1/os-services', '2.1', None, 200),
        ('GET', '/v2/os-services', None, None, 200),
        ('PUT', '/v2.1/os-services/enable', '2.1', host1, 200),
        ('PUT', '/v2.1/os-services/disable', '2.1', host1, 200),
        ('PUT', '/v2.1/os-services/disable-log-reason', '2.1',
         dict(host1, disabled_reason='test'), 200),
        ('PUT', '/v2.1/os-services/force-down', '2.11',
         dict(host1, forced_down=False), 200),
        ('PUT', '/v2/os-services/enable', None, host1, 200),
        ('GET', '/v2.1/os-services/%s/history' % ids['HOST1_SERVICE_UUID'],
         '2.1', None, 200),
        ('GET', '/v2/os-services/%s/history' % ids['HOST1_SERVICE_UUID'],
         None, None, 200),
        ('PUT', '/v2.1/os-services/' + ids['HOST1_SERVICE_UUID'], '2.53',
         {'status': 'enabled'}, 200),
        ('GET', '/v2.1/os-services/' + ids['HOST1_SERVICE_UUID'], '2.53',
         None, 200),
        ('GET', '/v2.1/os-hypervisors', '2.1', None, 200),
        ('GET', '/v2.1/os-hypervisors?with_servers=true', '2.53', None, 200),
        ('GET', '/v2.1/os-hypervisors/detail', '2.1', None, 200),
        ('GET', '/v2/os-hypervisors/detail', None, None, 200),
        ('GET', '/v2.1/os-hypervisors/' + ids['HOST1_NODE_ID'], '2.1',
         None, 200),
        ('GET', '/v2.1/os-hypervisors/' + ids['HOST1_NODE_UUID'], '2.88',
         None, 200),
        ('GET', '/v2.1/os-hypervisors/statistics', '2.1', None, 200),
        ('GET', '/v2.1/os-hypervisors/%s/uptime' % ids['HOST1_NODE_ID'],
         '2.1', None, 200),
        ('GET', '/v2.1/os-hypervisors/host1/search', '2.1', None, 200),
        ('GET', '/v2.1/os-hypervisors/host1/servers', '2.1', None, 200),
        ('GET', '/v2.1/os-availability-zone/detail', '2.1', None, 200),
        ('GET', '/v2/os-availability-zone/detail', None, None, 200),
        # host3 is forced down: its servers' states may change.
        ('POST', '/v2.1/os-host-servers/host3/action', '2.1',
         {'mark_shutdown': None}, 200),
        ('POST', '/v2.1/os-host-servers/host3/action', '2.1',
         {'os-resetState': {'state': 'error'}}, 200),
        ('DELETE', '/v2.1/os-services/' + ids['HOST4_SERVICE_ID'], '2.1',
         None, 204),
        ('DELETE', '/v2.1/os-services/' + ids['SCHEDULER_SERVICE_UUID'],
         '2.53', None, 204),
        ('DELETE', '/v2.1/os-aggregates/' + ids['DOOMED_AGGREGATE_ID'],
         '2.1', None, 200),
        ('DELETE', '/v2.1/flavors/hidden', '2.1', None, 202),
    ]


class _AppTestCase(base.BaseTestCase):

    OVERRIDES = {}

    def setUp(self):
        super().setUp()
        self.conf = configuration.api_conf(**self.OVERRIDES)
        self.configure(self.conf)
        self.world = self.useFixture(api_app.ApiWorld(api_world.SEEDED))
        self.app = deploy.load_app(self.conf)

    def configure(self, conf):
        pass

    def request(self, method, path, token=None, version=None, body=None,
                roles=None):
        headers = {}
        if token:
            headers['X-Auth-Token'] = token
        if roles:
            headers['X-Roles'] = roles
        return api_app.call_app(self.app, method, path, version, body,
                                headers)


class PolicyMatrixTest(_AppTestCase):

    def _run(self, token, expected=None):
        wrong = []
        checks = [(endpoint, expected or endpoint[4])
                  for endpoint in _endpoints(self.world.ids)]
        checks += [(endpoint, expected if expected == 401 else endpoint[4])
                   for endpoint in FOR_EVERYONE]
        for (method, path, version, body, _), want in checks:
            resp = self.request(method, path, token, version, body)
            if resp.status_code != want:
                wrong.append('%s %s (%s): %s, expected %s: %s' % (
                    method, path, version, resp.status_code, want,
                    resp.body[:200]))
            elif want >= 400:
                fault = jsonutils.loads(resp.body)
                name = {400: 'badRequest', 401: 'unauthorized',
                        403: 'forbidden'}[want]
                if fault.get(name, {}).get('code') != want:
                    wrong.append('%s %s: bad fault %s' % (method, path,
                                                          resp.body))
        return wrong

    def test_matrix(self):
        wrong = self._run(None, expected=401)
        wrong += self._run(MEMBER, expected=403)
        wrong += self._run(ADMIN)
        self.assertEqual([], wrong, '\n'.join(wrong))

    def test_member_403_names_the_rule(self):
        resp = self.request('GET', '/v2.1/os-hypervisors/detail', MEMBER)
        self.assertEqual(403, resp.status_code)
        self.assertEqual(
            "Policy doesn't allow os_compute_api:os-hypervisors:list-detail "
            "to be performed.",
            jsonutils.loads(resp.body)['forbidden']['message'])

    def test_member_sees_zones_but_not_their_hosts(self):
        resp = self.request('GET', '/v2.1/os-availability-zone/detail',
                            MEMBER)
        self.assertEqual(
            "Policy doesn't allow os_compute_api:os-availability-zone:detail "
            "to be performed.",
            jsonutils.loads(resp.body)['forbidden']['message'])
        zones = jsonutils.loads(self.request(
            'GET', '/v2.1/os-availability-zone', MEMBER).body)
        self.assertEqual([None], [zone['hosts'] for zone in
                                  zones['availabilityZoneInfo']])

    def test_all_projects_servers_are_for_admins(self):
        for path, rule in (('/v2.1/servers', 'index'),
                           ('/v2.1/servers/detail', 'detail')):
            resp = self.request('GET', path + '?all_tenants=1', MEMBER)
            self.assertEqual(
                "Policy doesn't allow os_compute_api:servers:%s:"
                "get_all_tenants to be performed." % rule,
                jsonutils.loads(resp.body)['forbidden']['message'])
            self.assertEqual(200, self.request(
                'GET', path + '?all_tenants=1', ADMIN).status_code)

    def test_servers_need_the_reader_role(self):
        resp = self.request('GET', '/v2.1/servers',
                            'fencer:' + api_world.USER_PROJECT,
                            roles='fencer')
        self.assertEqual(
            "Policy doesn't allow os_compute_api:servers:index to be "
            "performed.", jsonutils.loads(resp.body)['forbidden']['message'])

    def test_extensions_are_for_everyone(self):
        for token in (ADMIN, MEMBER):
            resp = self.request('GET', '/v2/extensions', token)
            self.assertEqual(200, resp.status_code)
        self.assertEqual(401, self.request('GET', '/v2/extensions')
                         .status_code)

    def test_versions_need_no_token(self):
        for path in ('/', '/v2', '/v2/', '/v2.1', '/v2.1/'):
            self.assertEqual(200, self.request('GET', path).status_code,
                             path)


FENCER_RULE = ('"os_compute_api:os-services:update": '
               '"role:admin or role:fencer"\n')
ADMIN_RULE = '"os_compute_api:os-services:update": "role:admin"\n'


class PolicyFileTest(_AppTestCase):
    """A policy.yaml override of os_compute_api:os-services:update.

    It grants role fencer the rule, and changes to the file apply to the
    running app. noauth2 takes a user's roles from X-Roles, so that custom
    roles can be tried without Keystone; that header never grants admin.
    """

    def configure(self, conf):
        directory = tempfile.mkdtemp(prefix='nova-forcedown-policy-')
        self.addCleanup(shutil.rmtree, directory, ignore_errors=True)
        self.policy_file = os.path.join(directory, 'policy.yaml')
        self._write(FENCER_RULE)
        policy_opts.set_defaults(conf, policy_file=self.policy_file)

    def _write(self, text):
        with open(self.policy_file, 'w') as policy_file:
            policy_file.write(text)
        # oslo.policy reloads on a changed mtime; make the change visible
        # even within the file system's timestamp resolution.
        mtime = getattr(self, '_mtime', os.path.getmtime(self.policy_file))
        self._mtime = mtime + 10
        os.utime(self.policy_file, (self._mtime, self._mtime))

    def _force_down(self, forced_down, token=FENCER, roles='fencer'):
        return self.request(
            'PUT', '/v2.1/os-services/force-down', token, '2.11',
            {'host': 'host1', 'binary': 'nova-compute',
             'forced_down': forced_down}, roles=roles)

    def test_fencer_may_force_down(self):
        resp = self._force_down(True)
        self.assertEqual(200, resp.status_code, resp.body)
        self.assertTrue(jsonutils.loads(resp.body)['service']['forced_down'])
        listing = self.request('GET', '/v2.1/os-services?host=host1', ADMIN,
                               '2.11')
        service = jsonutils.loads(listing.body)['services'][0]
        self.assertEqual((True, 'down'),
                         (service['forced_down'], service['state']))

    def test_other_rules_keep_their_defaults(self):
        resp = self.request('GET', '/v2.1/os-services',
                            'fencer:' + api_world.USER_PROJECT, roles='fencer')
        self.assertEqual(403, resp.status_code)
        self.assertEqual(403, self._force_down(True, token=MEMBER,
                                               roles=None).status_code)
        self.assertEqual(200, self._force_down(True, token=ADMIN,
                                               roles=None).status_code)

    def test_x_roles_grants_custom_roles_but_never_admin(self):
        for roles in ('fencer,admin', 'Admin, fencer', 'fencer,ADMIN '):
            self.assertEqual(200, self._force_down(True, roles=roles)
                             .status_code, roles)
            resp = self.request('GET', '/v2.1/os-services',
                                'fencer:' + api_world.USER_PROJECT,
                                roles=roles)
            self.assertEqual(403, resp.status_code, roles)

    def _applies_within_a_second(self, status):
        """The force-down answers ``status`` once the change is seen."""
        self.assertTrue(processes.wait_until(
            lambda: self._force_down(False).status_code == status,
            timeout=policy.RELOAD_CHECK_SECONDS + 1, interval=0.05))

    def test_changed_file_applies_without_restart(self):
        self.assertEqual(200, self._force_down(True).status_code)
        self._write(ADMIN_RULE)
        self._applies_within_a_second(403)
        self._write(FENCER_RULE)
        self._applies_within_a_second(200)

    def test_refused_request_writes_nothing(self):
        self._write(ADMIN_RULE)
        self.assertEqual(403, self._force_down(True).status_code)
        ctxt = context.get_admin_context()
        service = service_obj.Service.get_by_host_and_binary(
            ctxt, 'host1', 'nova-compute')
        self.assertFalse(service.forced_down)
