"""A real Keystone on loopback, for clients that need an identity service.

``openstack server list`` reads the identity service's version before it
calls the compute API, so the CLI tests run Keystone itself, as the README's
walkthrough does: the ``keystone`` package, the checkout's
``etc/keystone/keystone-dev.conf`` with the SQLite database and fernet keys
moved to a temporary directory, bootstrapped with ``keystone-manage`` and
served by waitress on a free port.
"""

import os
import sys

import fixtures
import openstack

from tests import processes

TOP = os.path.dirname(os.path.dirname(os.path.dirname(
    os.path.abspath(__file__))))
DEV_CONFIG = os.path.join(TOP, 'etc', 'keystone', 'keystone-dev.conf')
# The API's side: username and password of its service user.
API_CONFIG = os.path.join(TOP, 'etc', 'nova_forcedown',
                          'nova_forcedown-keystone-dev.conf')
SERVICE_USER = 'nova'
SERVICE_PASSWORD = 'nova-secret'

ADMIN_PASSWORD = 'admin-secret'
REGION = 'RegionOne'

_PATHS = """[database]
connection = sqlite:///%(directory)s/keystone.sqlite

[fernet_tokens]
key_repository = %(directory)s/fernet-keys

[fernet_receipts]
key_repository = %(directory)s/fernet-receipts

[identity]
# bcrypt's fewest rounds: every openstack command asks for a token.
password_hash_rounds = 4
"""

_AUTHTOKEN = """[keystone_authtoken]
www_authenticate_uri = %(url)s
auth_url = %(url)s
http_connect_timeout = 5
"""

# Keystone parses the command line at start-up: the port is in the code,
# not in sys.argv.
_SERVE = ('import waitress\n'
          'from keystone.server import wsgi\n'
          'waitress.serve(wsgi.initialize_public_application(),\n'
          '               host="127.0.0.1", port=%d)\n')


class KeystoneServer(fixtures.Fixture):
    """Keystone with its ``admin`` user, and the API's service user."""

    def _setUp(self):
        self.directory = self.useFixture(fixtures.TempDir()).path
        self.port = processes.free_port()
        self.url = 'http://127.0.0.1:%d/v3' % self.port
        self.config_files = [DEV_CONFIG, self._write(
            'keystone.conf', _PATHS % {'directory': self.directory})]
        self._manage('db_sync')
        self._manage('fernet_setup', '--keystone-user', str(os.getuid()),
                     '--keystone-group', str(os.getgid()))
        self._manage('bootstrap', '--bootstrap-password', ADMIN_PASSWORD,
                     '--bootstrap-public-url', self.url,
                     # keystonemiddleware's auth_token calls the internal one.
                     '--bootstrap-internal-url', self.url,
                     '--bootstrap-region-id', REGION)
        self.server = self.useFixture(processes.Process(
            [sys.executable, '-c', _SERVE % self.port],
            env={'OS_KEYSTONE_CONFIG_FILES': ';'.join(self.config_files)}))
        processes.wait_for_http(self.url, timeout=60,
                                process=self.server.process)
        self.admin = openstack.connection.Connection(
            auth=self.admin_auth(), identity_api_version='3')
        self.addCleanup(self.admin.close)
        self._add_service_user()
        self.compute = self.admin.identity.create_service(
            name='nova', type='compute')

    def admin_auth(self):
        return {'auth_url': self.url, 'username': 'admin',
                'password': ADMIN_PASSWORD, 'project_name': 'admin',
                'user_domain_name': 'Default',
                'project_domain_name': 'Default'}

    def admin_environment(self):
        """The OS_* variables of an admin's openrc for this Keystone."""
        variables = {'OS_' + key.upper(): value
                     for key, value in self.admin_auth().items()}
        variables['OS_IDENTITY_API_VERSION'] = '3'
        return variables

    def api_config_files(self):
        """The API's Keystone settings: the checkout's, at this port."""
        return [API_CONFIG, self._write('nova_forcedown-keystone.conf',
                                        _AUTHTOKEN % {'url': self.url})]

    def add_compute_endpoint(self, url):
        """Put ``url`` in the catalog as the public compute endpoint."""
        endpoint = self.admin.identity.create_endpoint(
            service_id=self.compute.id, interface='public', url=url,
            region_id=REGION)
        return lambda: self.admin.identity.delete_endpoint(endpoint)

    def _add_service_user(self):
        identity = self.admin.identity
        project = identity.create_project(name='service',
                                          domain_id='default')
        user = identity.create_user(name=SERVICE_USER,
                                    password=SERVICE_PASSWORD,
                                    domain_id='default')
        role = (identity.find_role('service') or
                identity.create_role(name='service'))
        identity.assign_project_role_to_user(project, user, role)

    def _write(self, name, text):
        path = os.path.join(self.directory, name)
        with open(path, 'w') as config:
            config.write(text)
        return path

    def _manage(self, *args):
        argv = [processes.script('keystone-manage')]
        for path in self.config_files:
            argv += ['--config-file', path]
        result = processes.run(argv + list(args), timeout=120)
        if result.returncode:
            raise AssertionError('keystone-manage %s failed:\n%s'
                                 % (args[0], result.stderr[-3000:]))
