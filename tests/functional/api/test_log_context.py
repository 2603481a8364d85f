"""Every log line names the request being served, and only that one.

oslo.log writes the request id, user and project of the thread's current
context into each line. The real app from api-paste.ini serves requests
one after another on the test's thread, as a server thread does: a request
that never authenticates must not log as the authenticated request before
it, and no request leaves its context behind on the thread.
"""

import base64
import os
import uuid

import bcrypt
import fixtures
from oslo_context import context as oslo_context
from oslotest import base

from nova_forcedown.api import deploy
from nova_forcedown import context as nf_context
from tests.fixtures import api_app
from tests.fixtures import api_world
from tests.fixtures import configuration
from tests.fixtures import log_lines

ADMIN_PROJECT = api_world.ADMIN_PROJECT


def _basic(user, password):
    token = base64.b64encode(('%s:%s' % (user, password)).encode()).decode()
    return {'Authorization': 'Basic ' + token}


def _request_id(resp):
    return resp.headers['x-openstack-request-id']


class _LogContextTestCase(base.BaseTestCase):

    OVERRIDES = {}

    def setUp(self):
        super().setUp()
        self.directory = self.useFixture(fixtures.TempDir()).path
        self.world = self.useFixture(api_app.ApiWorld(api_world.SEEDED))
        conf = configuration.api_conf(**self.overrides())
        self.addCleanup(conf.reset)
        self.app = deploy.load_app(conf)
        self.log = self.useFixture(log_lines.LogLines(conf))
        # A server thread starts with no context; so does this test.
        nf_context.make_current(None)

    def overrides(self):
        return dict(self.OVERRIDES)

    def request(self, path, headers=None):
        self.log.reset()
        return api_app.call_app(self.app, 'GET', path, headers=headers)

    def assertLinesNameOnly(self, resp, user='None', project='None'):
        """Every line logged names this request and user, and nothing else.

        Returns the lines.
        """
        lines = self.log.lines()
        own = '%s user=%s project=%s]' % (_request_id(resp), user, project)
        strangers = [line for line in lines if own not in line]
        self.assertEqual([], strangers, 'lines naming another request')
        return lines


class TestHTTPBasicLogContext(_LogContextTestCase):

    def overrides(self):
        user_file = os.path.join(self.directory, 'htpasswd')
        with open(user_file, 'w') as output:
            hashed = bcrypt.hashpw(b'admin-secret', bcrypt.gensalt(rounds=4))
            output.write('admin:%s\n' % hashed.decode())
        return {'api.auth_strategy': 'http_basic',
                'api.http_basic_auth_user_file': user_file}

    def test_refused_login_after_an_admin_request_logs_as_itself(self):
        admin = self.request('/v2.1/os-services',
                             _basic('admin', 'admin-secret'))
        self.assertEqual(200, admin.status_code)
        self.assertNotEqual(
            [], self.assertLinesNameOnly(admin, user='admin'))

        refused = self.request('/v2.1/os-services', _basic('admin', 'wrong'))
        self.assertEqual(401, refused.status_code)
        lines = self.assertLinesNameOnly(refused)
        self.assertEqual(1, len(lines), lines)
        self.assertIn("authentication failed for user 'admin'", lines[0])
        self.assertNotIn(_request_id(admin), self.log.output)
        self.assertIsNone(oslo_context.get_current())

    def test_unauthenticated_requests_leave_no_context(self):
        self.request('/v2.1/os-services', _basic('admin', 'admin-secret'))
        for path in ('/', '/v2', '/v2.1/', '/healthcheck', '/nowhere',
                     '/v2.1/os-services', '/v2/extensions'):
            resp = self.request(path)
            self.assertLinesNameOnly(resp)
            self.assertNotIn('user=admin', self.log.output, path)
            self.assertIsNone(oslo_context.get_current(), path)

    def test_a_valid_global_request_id_is_named(self):
        global_id = 'req-%s' % uuid.uuid4()
        resp = self.request('/v2.1/os-services', dict(
            _basic('mallory', 'x'), **{'X-OpenStack-Request-ID': global_id}))
        self.assertEqual(401, resp.status_code)
        (line,) = self.assertLinesNameOnly(resp)
        self.assertTrue(line.startswith('[%s %s ' % (global_id,
                                                     _request_id(resp))),
                        line)


class TestNoAuth2LogContext(_LogContextTestCase):

    def test_lines_name_the_user_and_project_of_each_request(self):
        for token, user, project in (
                ('admin:' + ADMIN_PROJECT, 'admin', ADMIN_PROJECT),
                ('alice:c0ffee', 'alice', 'c0ffee'),
                ('admin:' + ADMIN_PROJECT, 'admin', ADMIN_PROJECT)):
            # A 404 logs its one line whoever asks (policy decisions,
            # remembered, may log nothing the second time).
            resp = self.request('/v2.1/flavors/no-such-flavor',
                                {'X-Auth-Token': token})
            self.assertEqual(404, resp.status_code)
            self.assertNotEqual([], self.assertLinesNameOnly(
                resp, user=user, project=project))
            self.assertIsNone(oslo_context.get_current())
            anonymous = self.request('/v2.1')
            self.assertEqual(200, anonymous.status_code)
            self.assertLinesNameOnly(anonymous)

    def test_each_refusal_before_a_handler_is_one_line(self):
        admin = {'X-Auth-Token': 'admin:' + ADMIN_PROJECT}
        for headers, status, said in (
                ({}, 401, 'Client error 401: Authentication required'),
                (dict(admin, **{'OpenStack-API-Version': 'compute 2.999'}),
                 406, 'Client error 406: Version 2.999 is not supported'),
                (dict(admin, **{'OpenStack-API-Version': 'compute two'}),
                 400, 'Client error 400: API Version String two is of '
                      'invalid format')):
            resp = self.request('/v2.1/os-services', headers)
            self.assertEqual(status, resp.status_code)
            lines = self.assertLinesNameOnly(
                resp, **({} if status == 401 else
                         {'user': 'admin', 'project': ADMIN_PROJECT}))
            self.assertEqual(
                [said], [line[line.index('Client error'):][:len(said)]
                         for line in lines if 'Client error' in line])
