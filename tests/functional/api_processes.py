"""The API server and heartbeat agent as processes on a server database.

:class:`Deployment` writes one configuration file (noauth2 on loopback, a
short report_interval) naming a database URL, and starts
``nova-forcedown-api`` under gunicorn and ``nova-forcedown-compute`` from
it. :class:`Client` is a small JSON client whose every request is bounded
in time; it reports a failed connection as status 0 instead of raising.
"""

import http.client
import json
import sys
import time

import fixtures

from tests import processes

ADMIN_TOKEN = 'admin:0123456789abcdef0123456789abcdef'

_CONFIG = """[DEFAULT]
state_path = %(state_path)s
report_interval = %(report_interval)s
service_down_time = %(service_down_time)s

[api]
auth_strategy = noauth2

[wsgi]
workers = %(workers)d
threads = %(threads)d

[database]
connection = %(connection)s
%(database_extra)s
"""


class Deployment(fixtures.Fixture):
    """A configuration file, and the processes started from it."""

    def __init__(self, connection, workers=2, threads=8, report_interval=1,
                 service_down_time=10, database_extra=''):
        super().__init__()
        self.values = {'connection': connection, 'workers': workers,
                       'threads': threads,
                       'report_interval': report_interval,
                       'service_down_time': service_down_time,
                       'database_extra': database_extra}

    def _setUp(self):
        self.state_path = self.useFixture(fixtures.TempDir()).path
        self.config_file = processes.write_config(
            self.state_path, _CONFIG % dict(self.values,
                                            state_path=self.state_path))

    def start_api(self):
        port = processes.free_port()
        api = self.useFixture(processes.Process([
            processes.script('nova-forcedown-api'), '--config-file',
            self.config_file, '--port', str(port)]))
        processes.wait_for_http('http://127.0.0.1:%d/' % port, timeout=40,
                                process=api.process)
        api.client = Client(port)
        return api

    def start_agent(self, *args):
        return self.useFixture(processes.Process([
            sys.executable, '-m', 'nova_forcedown.cmd.compute',
            '--config-file', self.config_file, *args]))


class Response:

    def __init__(self, status, body, elapsed):
        self.status = status
        self.text = body.decode('utf-8', 'replace')
        self.elapsed = elapsed

    def json(self):
        return json.loads(self.text)

    def __repr__(self):
        return '<%s %.2fs %s>' % (self.status, self.elapsed, self.text[:300])


class Client:
    """JSON over HTTP to 127.0.0.1:``port``; each request within timeout."""

    def __init__(self, port, token=ADMIN_TOKEN, timeout=30):
        self.port = port
        self.token = token
        self.timeout = timeout

    def request(self, method, path, body=None, version=None, headers=None):
        all_headers = {'X-Auth-Token': self.token,
                       'Accept': 'application/json'}
        if version:
            all_headers['OpenStack-API-Version'] = 'compute ' + version
        data = None
        if body is not None:
            data = json.dumps(body).encode()
            all_headers['Content-Type'] = 'application/json'
        all_headers.update(headers or {})
        start = time.monotonic()
        connection = http.client.HTTPConnection('127.0.0.1', self.port,
                                                timeout=self.timeout)
        try:
            connection.request(method, path, body=data, headers=all_headers)
            response = connection.getresponse()
            payload = response.read()
            status = response.status
        except OSError as exc:
            status, payload = 0, str(exc).encode()
        finally:
            connection.close()
        return Response(status, payload, time.monotonic() - start)

    def get(self, path, **kwargs):
        return self.request('GET', path, **kwargs)

    def put(self, path, body, **kwargs):
        return self.request('PUT', path, body=body, **kwargs)
