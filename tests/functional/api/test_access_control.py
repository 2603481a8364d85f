"""Access control: every endpoint x every kind of credential.

``keystone`` mode runs keystonemiddleware's real auth_token against a
Keystone v3 stub served by the test on loopback
(tests/fixtures/keystone_stub.py): admin, member, reader, a member of
another project, no token, an unknown token and an expired one.
``http_basic`` mode reads an htpasswd file of bcrypt hashes written by the
test: the admin user, a user who is not an administrator, a wrong password,
an unknown user, a password longer than bcrypt reads, control characters in
user names and malformed headers. ``noauth2`` mode: an X-Roles header never
makes a user an administrator. Each gets exactly the expected status; no
error body carries a host name, another project's data or a traceback.
Policy overrides from policy.yaml and policy.json apply in keystone mode.
(``noauth2`` on a non-loopback address is refused at start-up:
cmd/test_api_server.py for 0.0.0.0, here for the IPv6 wildcard.)
"""

import base64
import os

import bcrypt
import fixtures
from oslo_serialization import jsonutils
from oslotest import base
import testscenarios

from nova_forcedown.api import deploy
from nova_forcedown import conf as nf_conf
from tests.fixtures import api_app
from tests.fixtures import api_world
from tests.fixtures import keystone_stub
from tests.fixtures import log_lines
from tests.fixtures import processes
from tests.functional.api import test_policy_matrix

load_tests = testscenarios.load_tests_apply_scenarios

ADMIN_PROJECT = api_world.ADMIN_PROJECT
OTHER_PROJECT = 'abcdef0123456789'

_KEYSTONE_CONFIG = """[api]
auth_strategy = keystone

[keystone_authtoken]
www_authenticate_uri = %(url)s/v3
auth_url = %(url)s/v3
auth_type = password
username = %(user)s
password = %(password)s
project_name = %(project)s
user_domain_id = default
project_domain_id = default
http_connect_timeout = 5
http_request_max_retries = 0
"""

_HTTP_BASIC_CONFIG = """[api]
auth_strategy = http_basic
http_basic_auth_user_file = %(user_file)s
http_basic_admin_users = admin
"""

# Paths that need no credential at all.
PUBLIC = [('GET', '/', None, None, 200), ('GET', '/v2.1', None, None, 200),
          ('GET', '/v2/', None, None, 200),
          ('GET', '/healthcheck', None, None, 200)]
# Allowed to any authenticated user.
EXTENSIONS = [('GET', '/v2/extensions', None, None, 200),
              ('GET', '/v2/extensions/os-hypervisor-status', None, None,
               200)]
HOST_NAMES = ('host1', 'host2', 'host.example.org', 'controller')


class _AccessTestCase(base.BaseTestCase):
    """The app from api-paste.ini with a configuration file of the test."""

    CONFIG = ''

    def setUp(self):
        super().setUp()
        self.directory = self.useFixture(fixtures.TempDir()).path
        self.world = self.useFixture(api_app.ApiWorld(api_world.SEEDED))

    def build_app(self, text, policy=None):
        path = os.path.join(self.directory, 'nova_forcedown.conf')
        if policy is not None:
            name, content = policy
            policy_file = os.path.join(self.directory, name)
            with open(policy_file, 'w') as output:
                output.write(content)
            text += '\n[oslo_policy]\npolicy_file = %s\n' % policy_file
        with open(path, 'w') as output:
            output.write(text)
        conf = nf_conf.make_conf(['--config-file', path],
                                 default_config_files=[],
                                 default_config_dirs=[])
        self.addCleanup(conf.reset)
        self.conf = conf
        return deploy.load_app(conf)

    def request(self, method, path, version=None, body=None, headers=None):
        return api_app.call_app(self.app, method, path, version, body,
                                headers)

    def run_matrix(self, credentials, include_writes=True):
        """Every endpoint with each credential; returns the mismatches.

        ``credentials`` is [(label, headers, expected)] where expected is a
        status for every protected endpoint, or None for "as admin"; the
        admin credential must come last, since its deletes succeed.
        """
        wrong = []
        endpoints = test_policy_matrix._endpoints(self.world.ids)
        for label, headers, expected in credentials:
            checks = [(endpoint, expected or endpoint[4])
                      for endpoint in endpoints]
            checks += [(endpoint, endpoint[4]) for endpoint in PUBLIC]
            checks += [(endpoint, expected if expected in (401,) else 200)
                       for endpoint in (EXTENSIONS +
                                        test_policy_matrix.FOR_EVERYONE)]
            for (method, path, version, body, _), want in checks:
                resp = self.request(method, path, version, body, headers)
                problem = _problem(resp, want)
                if problem:
                    wrong.append('%s: %s %s (%s): %s' % (
                        label, method, path, version, problem))
        return wrong


def _problem(resp, want):
    text = resp.body.decode('utf-8', 'replace')
    if resp.status_code != want:
        return 'got %s, expected %s: %s' % (resp.status_code, want,
                                            text[:200])
    if 'Traceback' in text or 'File "/' in text:
        return 'traceback in the body'
    if want >= 400:
        fault = jsonutils.loads(resp.body)
        (detail,) = fault.values()
        if detail.get('code') != want:
            return 'not a fault: %s' % text[:200]
        if any(host in text for host in HOST_NAMES):
            return 'an error body names a host: %s' % text[:200]
    return None


class TestKeystoneMode(_AccessTestCase):

    def setUp(self):
        super().setUp()
        self.keystone = self.useFixture(keystone_stub.KeystoneStub())
        stub = self.keystone
        self.tokens = {
            'admin': stub.add_token('admin', ADMIN_PROJECT,
                                    ['admin', 'member', 'reader']),
            'member': stub.add_token('alice', ADMIN_PROJECT,
                                     ['member', 'reader']),
            'reader': stub.add_token('rita', ADMIN_PROJECT, ['reader']),
            'other project': stub.add_token('olga', OTHER_PROJECT,
                                            ['member', 'reader']),
            'expired': stub.add_token('admin', ADMIN_PROJECT, ['admin'],
                                      expired=True),
        }

    def _config(self):
        return _KEYSTONE_CONFIG % {
            'url': self.keystone.url, 'user': keystone_stub.SERVICE_USER,
            'password': keystone_stub.SERVICE_PASSWORD,
            'project': keystone_stub.SERVICE_PROJECT}

    def token(self, name):
        return {'X-Auth-Token': self.tokens[name]}

    def test_matrix(self):
        self.app = self.build_app(self._config())
        wrong = self.run_matrix([
            ('no token', {}, 401),
            ('unknown token', {'X-Auth-Token': 'f' * 32}, 401),
            ('expired token', self.token('expired'), 401),
            ('member', self.token('member'), 403),
            ('reader', self.token('reader'), 403),
            ('other project', self.token('other project'), 403),
            ('admin', self.token('admin'), None),
        ])
        self.assertEqual([], wrong, '\n'.join(wrong))
        self.assertGreater(self.keystone.validations, 0)

    def test_identity_headers_from_the_client_are_ignored(self):
        self.app = self.build_app(self._config())
        forged = {'X-Identity-Status': 'Confirmed', 'X-Roles': 'admin',
                  'X-User-Id': 'admin', 'X-Project-Id': ADMIN_PROJECT}
        resp = self.request('GET', '/v2.1/os-services', headers=forged)
        self.assertEqual(401, resp.status_code, resp.body)
        resp = self.request('GET', '/v2.1/os-services',
                            headers=dict(forged, **self.token('member')))
        self.assertEqual(403, resp.status_code, resp.body)

    def test_no_access_to_another_projects_url(self):
        self.app = self.build_app(self._config())
        for name, project in (('admin', OTHER_PROJECT),
                              ('other project', ADMIN_PROJECT)):
            for path in ('/os-services', '/os-hypervisors/detail',
                         '/os-hypervisors/statistics'):
                resp = self.request('GET', '/v2.1/%s%s' % (project, path),
                                    headers=self.token(name))
                self.assertIsNone(_problem(resp, 400), (name, path))
                self.assertIn("doesn't match Context's project_id",
                              resp.body.decode())
        resp = self.request('GET', '/v2.1/%s/os-services' % ADMIN_PROJECT,
                            headers=self.token('admin'))
        self.assertEqual(200, resp.status_code)

    def test_unreachable_identity_service_is_refused(self):
        self.app = self.build_app(self._config())
        self.keystone.server.shutdown()
        self.keystone.server.server_close()
        resp = self.request('GET', '/v2.1/os-services',
                            headers={'X-Auth-Token': 'e' * 32})
        # keystonemiddleware answers 503: no token is accepted unchecked.
        self.assertIsNone(_problem(resp, 503))
        self.assertIn('serviceUnavailable', resp.json_body)


class TestKeystonePolicyFiles(_AccessTestCase):
    """Reader may list services, by a rule in policy.yaml or policy.json."""

    scenarios = [
        ('yaml', {'policy': (
            'policy.yaml',
            '"os_compute_api:os-services:list": "role:reader"\n'
            '"os_compute_api:os-hypervisors:list": "role:reader"\n')}),
        ('json', {'policy': ('policy.json', jsonutils.dumps({
            'os_compute_api:os-services:list': 'role:reader',
            'os_compute_api:os-hypervisors:list': 'role:reader'}))}),
    ]

    def test_override_applies_and_nothing_else_changes(self):
        keystone = self.useFixture(keystone_stub.KeystoneStub())
        self.app = self.build_app(_KEYSTONE_CONFIG % {
            'url': keystone.url, 'user': keystone_stub.SERVICE_USER,
            'password': keystone_stub.SERVICE_PASSWORD,
            'project': keystone_stub.SERVICE_PROJECT}, policy=self.policy)
        reader = {'X-Auth-Token': keystone.add_token(
            'rita', ADMIN_PROJECT, ['reader'])}
        member = {'X-Auth-Token': keystone.add_token(
            'alice', ADMIN_PROJECT, ['member'])}
        expected = [
            (reader, 'GET', '/v2.1/os-services', None, 200),
            (reader, 'GET', '/v2.1/os-hypervisors', None, 200),
            (reader, 'GET', '/v2.1/os-hypervisors/detail', None, 403),
            (reader, 'PUT', '/v2.1/os-services/disable',
             {'host': 'host1', 'binary': 'nova-compute'}, 403),
            (member, 'GET', '/v2.1/os-services', None, 403),
        ]
        for headers, method, path, body, want in expected:
            resp = self.request(method, path, body=body, headers=headers)
            self.assertIsNone(_problem(resp, want), (method, path))


def _basic(user, password):
    token = base64.b64encode(('%s:%s' % (user, password)).encode()).decode()
    return {'Authorization': 'Basic ' + token}


# bcrypt's cost in the test's htpasswd file: not bcrypt's default (12), nor
# its least (4), so that a check at the file's cost is told from either.
COST = 5
# bcrypt reads 72 bytes of a password at most.
POET_PASSWORD = 'rhyme-' * 12


class TestHTTPBasicMode(_AccessTestCase):

    def setUp(self):
        super().setUp()
        self.user_file = os.path.join(self.directory, 'htpasswd')
        self.write_users((('admin', 'admin-secret', COST),
                          ('operator', 'operator-secret', COST),
                          ('poet', POET_PASSWORD, COST)))
        self.app = self.build_app(_HTTP_BASIC_CONFIG % {
            'user_file': self.user_file})

    def write_users(self, users):
        """(Re)write the htpasswd file with (user, password, cost)."""
        self.hashes = {}
        with open(self.user_file, 'w') as output:
            for user, password, cost in users:
                hashed = bcrypt.hashpw(password.encode(),
                                       bcrypt.gensalt(rounds=cost))
                output.write('%s:%s\n' % (user, hashed.decode()))
                self.hashes[user] = hashed

    def count_checks(self):
        """The hashes bcrypt checks from now on; each check still runs."""
        checked = []
        checkpw = bcrypt.checkpw

        def counted_checkpw(password, hashed):
            checked.append(hashed)
            return checkpw(password, hashed)
        self.useFixture(fixtures.MonkeyPatch('bcrypt.checkpw',
                                             counted_checkpw))
        return checked

    def costs_checked(self, checked, attempts):
        """The cost of the one bcrypt check of each (user, password)."""
        costs = []
        for user, password in attempts:
            del checked[:]
            resp = self.request('GET', '/v2/extensions',
                                headers=_basic(user, password))
            self.assertIsNone(_problem(resp, 401), user)
            (hashed,) = checked
            costs.append(int(hashed.split(b'$')[2]))
        return costs

    def test_matrix(self):
        wrong = self.run_matrix([
            ('no header', {}, 401),
            ('bad password', _basic('admin', 'wrong'), 401),
            ('empty password', _basic('admin', ''), 401),
            ('unknown user', _basic('mallory', 'admin-secret'), 401),
            ('password over 72 bytes',
             _basic('admin', 'admin-secret' + 'x' * 61), 401),
            ('unknown user, password over 72 bytes',
             _basic('mallory', 'x' * 73), 401),
            ('not basic', {'Authorization': 'Bearer admin-secret'}, 401),
            ('not base64', {'Authorization': 'Basic !!!'}, 401),
            ('token header', {'X-Auth-Token': 'admin:' + ADMIN_PROJECT},
             401),
            ('not an admin', _basic('operator', 'operator-secret'), 403),
            ('admin', _basic('admin', 'admin-secret'), None),
        ])
        self.assertEqual([], wrong, '\n'.join(wrong))

    def test_401_asks_for_basic_credentials(self):
        resp = self.request('GET', '/v2.1/os-services',
                            headers=_basic('admin', 'wrong'))
        self.assertEqual(401, resp.status_code)
        self.assertTrue(resp.headers['WWW-Authenticate'].startswith('Basic'))

    def test_a_password_is_read_to_72_bytes_and_no_further(self):
        self.assertEqual(72, len(POET_PASSWORD.encode()))
        resp = self.request('GET', '/v2/extensions',
                            headers=_basic('poet', POET_PASSWORD))
        self.assertEqual(200, resp.status_code)
        # htpasswd and bcrypt before 5.0 would cut this one to the first 72
        # bytes, and let it in.
        for user, password in (('poet', POET_PASSWORD + '!'),
                               ('admin', 'admin-secret' + ' ' * 200),
                               ('nobody', POET_PASSWORD + '!')):
            resp = self.request('GET', '/v2/extensions',
                                headers=_basic(user, password))
            self.assertIsNone(_problem(resp, 401), user)
            self.assertTrue(
                resp.headers['WWW-Authenticate'].startswith('Basic'))

    def test_every_attempt_costs_one_bcrypt_check_at_the_files_cost(self):
        checked = self.count_checks()
        cost = b'$2b$%02d$' % COST
        for user, password, known, want in (
                ('admin', 'admin-secret', True, 200),
                ('admin', 'wrong', True, 401),
                ('mallory', 'wrong', False, 401),
                ('', '', False, 401),
                ('admin', 'admin-secret' + 'x' * 61, False, 401),
                ('mallory', 'x' * 500, False, 401)):
            del checked[:]
            resp = self.request('GET', '/v2/extensions',
                                headers=_basic(user, password))
            self.assertEqual(want, resp.status_code, (user, password))
            (hashed,) = checked
            self.assertTrue(hashed.startswith(cost), hashed)
            self.assertEqual(known, hashed in self.hashes.values(), user)

    def test_an_unknown_user_costs_what_most_known_users_cost(self):
        # Most users at COST, one at COST + 2: a check at the highest cost
        # would take four times a typical user's wrong password.
        self.write_users((('admin', 'admin-secret', COST + 2),
                          ('operator', 'operator-secret', COST),
                          ('poet', POET_PASSWORD, COST)))
        checked = self.count_checks()
        attempts = (('mallory', 'wrong'), ('operator', 'wrong'),
                    ('admin', 'wrong'), ('mallory', 'x' * 73))
        self.assertEqual([COST, COST, COST + 2, COST],
                         self.costs_checked(checked, attempts))
        # Rehashed to COST + 1 for most users: the next attempt follows,
        # without a restart.
        self.write_users((('admin', 'admin-secret', COST + 1),
                          ('operator', 'operator-secret', COST + 1),
                          ('poet', POET_PASSWORD, COST)))
        self.assertEqual([COST + 1, COST + 1, COST + 1, COST + 1],
                         self.costs_checked(checked, attempts))
        # Half and half: the cheaper of the two.
        self.write_users((('admin', 'admin-secret', COST + 2),
                          ('operator', 'operator-secret', COST)))
        self.assertEqual([COST, COST, COST + 2, COST],
                         self.costs_checked(checked, attempts))

    def test_control_characters_in_user_names_never_reach_the_log(self):
        log = self.useFixture(log_lines.LogLines(self.conf))
        names = ['mallory\nforged line', 'mallory\r\nforged line',
                 'admin\n', 'esc\x1b[2J\x1b[31mape', 'nul\x00', 'tab\tbed',
                 'del\x7f', 'sep\u2028forged line', 'nel\x85forged line']
        headers = [(_basic(name, 'wrong'), 401) for name in names]
        headers += [
            ({'Authorization': 'Basic ' + base64.b64encode(
                b'\xff\x1b[2J:wrong').decode()}, 401),
            # A control character in the header itself is refused before
            # authentication, as in any other header.
            ({'Authorization': '\x1b[2J\x1b[31m bWFsbG9yeTp3cm9uZw=='}, 400),
            ({'Authorization': 'Basic \x1b[2J'}, 400)]
        for header, status in headers:
            resp = self.request('GET', '/v2.1/os-services', headers=header)
            self.assertIsNone(_problem(resp, status), header)
        lines = log.lines()
        self.assertEqual(len(headers), len(lines), lines)
        for line in lines:
            self.assertTrue(line.isprintable(), ascii(line))
            self.assertIn('user=None', line)
        self.assertIn(r"for user 'mallory\nforged line'", log.output)
        self.assertIn(r"for user 'esc\x1b[2J\x1b[31mape'", log.output)


class TestNoAuth2Mode(_AccessTestCase):
    """noauth2: only user admin is an administrator, X-Roles or not."""

    def setUp(self):
        super().setUp()
        self.app = self.build_app('[api]\nauth_strategy = noauth2\n')

    def test_matrix(self):
        member = {'X-Auth-Token': 'alice:' + api_world.USER_PROJECT}
        admin = {'X-Auth-Token': 'admin:' + ADMIN_PROJECT}
        wrong = self.run_matrix([
            ('no token', {}, 401),
            ('empty token', {'X-Auth-Token': ' '}, 401),
            ('member', member, 403),
            ('X-Roles admin', dict(member, **{'X-Roles': 'admin'}), 403),
            ('X-Roles Admin', dict(member, **{'X-Roles': ' Admin '}), 403),
            ('X-Roles with admin', dict(member, **{
                'X-Roles': 'reader,ADMIN,member'}), 403),
            ('admin with X-Roles', dict(admin, **{'X-Roles': 'reader'}),
             None),
        ])
        self.assertEqual([], wrong, '\n'.join(wrong))

    def test_a_control_character_in_the_token_is_refused_everywhere(self):
        # Refused as any header with one is, before authentication.
        token = {'X-Auth-Token': 'admin:' + ADMIN_PROJECT + '\x1b[2J'}
        wrong = []
        for method, path, version, body, _ in (
                test_policy_matrix._endpoints(self.world.ids) +
                test_policy_matrix.FOR_EVERYONE + list(PUBLIC)):
            resp = self.request(method, path, version, body, token)
            problem = _problem(resp, 400)
            if problem:
                wrong.append('%s %s: %s' % (method, path, problem))
        self.assertEqual([], wrong, '\n'.join(wrong))

    def test_scope_and_domain_headers_from_the_client_are_ignored(self):
        # Scope enforcement would refuse such a context anyway; it must not
        # exist at all, nor show in what is logged of the request.
        log = self.useFixture(log_lines.LogLines(self.conf))
        member = {'X-Auth-Token': 'alice:' + api_world.USER_PROJECT,
                  'X-Roles': 'reader'}
        for forged in ({'OpenStack-System-Scope': 'forged-scope'},
                       {'X-Domain-Id': 'forged-domain'},
                       {'X-Domain-Name': 'forged-domain'}):
            resp = self.request('GET', '/v2/extensions',
                                headers=dict(member, **forged))
            self.assertEqual(200, resp.status_code, forged)
        self.assertIn('"roles": ["reader"]', log.output)
        self.assertNotIn('forged', log.output)


class TestNoAuth2Refusal(base.BaseTestCase):

    def test_refused_on_the_ipv6_wildcard(self):
        state = self.useFixture(fixtures.TempDir()).path
        config = processes.write_config(
            state, '[DEFAULT]\nstate_path = %s\n' % state)
        result = processes.run([
            processes.script('nova-forcedown-api'), '--config-file', config,
            '--dev', '--host', '::', '--port', str(processes.free_port())])
        self.assertEqual(1, result.returncode)
        self.assertIn('noauth2 is refused', result.stderr)
        self.assertNotIn('Traceback', result.stderr + result.stdout)
