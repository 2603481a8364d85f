"""A deployment in this process: the real WSGI app and agent-made hosts.

The app is the one operators give uWSGI or gunicorn
(``nova_forcedown.wsgi.api:application``), built from a configuration
file of its own: noauth2, a temporary SQLite file, ``[database]
sync_on_startup`` so that it migrates the file with the project's db sync.
The hosts, their nodes and servers are registered by the real agent, the
``nova-forcedown-compute`` console script with the fake driver, started
as a process and stopped once the API lists the servers; the API then
holds the hosts up for ``service_down_time``, long enough for the calls.
"""

import importlib
import importlib.metadata
import os
import shutil
import subprocess
import sys
import tempfile
import time

from oslo_serialization import jsonutils
import webob

APPLICATION_MODULE = 'nova_forcedown.wsgi.api'
CONFIG_FILE_ENV = 'NOVA_FORCEDOWN_CONFIG_FILE'
AGENT_SCRIPT = 'nova-forcedown-compute'
ADMIN_TOKEN = 'admin:6f70656e737461636b'
HOST_PREFIX = 'rp-host'
REGISTRATION_SECONDS = 120

_CONFIG = """[DEFAULT]
state_path = %(directory)s
# What the server logs as it starts (the paste file loaded...) is not news.
default_log_levels = nova_forcedown=WARNING,alembic=WARNING,stevedore=ERROR

[api]
auth_strategy = noauth2

[database]
connection = sqlite:///%(directory)s/nova_forcedown.sqlite
sync_on_startup = true
"""


class RegistrationFailed(Exception):
    pass


class Deployment:
    """``with Deployment(hosts=3) as deployment:`` the app and its hosts.

    ``servers``: {host: [uuid, ...]}, one server per host.
    """

    def __init__(self, hosts):
        self.hosts = ['%s%d' % (HOST_PREFIX, i) for i in range(1, hosts + 1)]
        self.directory = tempfile.mkdtemp(prefix='nova-forcedown-path-')
        self.config = os.path.join(self.directory, 'nova_forcedown.conf')
        with open(self.config, 'w') as config:
            config.write(_CONFIG % {'directory': self.directory})
        self.app = None
        self.servers = {}

    def __enter__(self):
        try:
            self.app = _load_application(self.config)
            self.servers = self._register_hosts()
        except BaseException:
            self.close()
            raise
        return self

    def __exit__(self, *exc_info):
        self.close()

    def close(self):
        shutil.rmtree(self.directory, ignore_errors=True)

    def request(self, method, path, version=None, body=None):
        """(status, JSON body or None) of one request through the app."""
        req = webob.Request.blank(path, method=method)
        req.headers['X-Auth-Token'] = ADMIN_TOKEN
        if version:
            req.headers['OpenStack-API-Version'] = 'compute ' + version
        if body is not None:
            req.content_type = 'application/json'
            req.body = jsonutils.dump_as_bytes(body)
        resp = req.get_response(self.app)
        return resp.status_int, resp.json if resp.body else None

    def _register_hosts(self):
        log_path = os.path.join(self.directory, 'agent.log')
        with open(log_path, 'wb') as log:
            agent = subprocess.Popen(
                _console_command(AGENT_SCRIPT) + [
                    '--config-file', self.config, '--driver', 'fake',
                    '--hosts', str(len(self.hosts)), '--host-prefix',
                    HOST_PREFIX, '--instances', '1'],
                stdout=log, stderr=subprocess.STDOUT,
                stdin=subprocess.DEVNULL)
        try:
            return self._wait_for_servers(agent, log_path)
        finally:
            agent.terminate()
            agent.wait()

    def _wait_for_servers(self, agent, log_path):
        deadline = time.monotonic() + REGISTRATION_SECONDS
        while time.monotonic() < deadline and agent.poll() is None:
            servers = self._servers_by_host()
            if all(servers.get(host) for host in self.hosts):
                return servers
            time.sleep(0.1)
        with open(log_path, errors='replace') as log:
            raise RegistrationFailed('the agent registered no server on '
                                     'every host: %s' % log.read())

    def _servers_by_host(self):
        status, body = self.request('GET',
                                    '/v2.1/servers/detail?all_tenants=1')
        servers = {}
        if status != 200:
            return servers
        for server in body['servers']:
            servers.setdefault(server['OS-EXT-SRV-ATTR:host'], []).append(
                server['id'])
        return servers


def _load_application(config):
    """The WSGI application of the deployment interface, from ``config``."""
    os.environ[CONFIG_FILE_ENV] = config
    return importlib.import_module(APPLICATION_MODULE).application


def _console_command(name):
    """The command line that runs the console script ``name`` of the package.

    Through its entry point, with this interpreter, wherever it is
    installed.
    """
    (script,) = importlib.metadata.entry_points(group='console_scripts',
                                                name=name)
    return [sys.executable, '-c', 'import sys; from %s import %s as main; '
            'sys.exit(main())' % (script.module, script.attr)]
