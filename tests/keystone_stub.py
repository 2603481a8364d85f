"""A tiny Keystone v3 identity endpoint on loopback, for auth_token tests.

It serves what keystonemiddleware's auth_token needs and nothing more:
version discovery (``GET /`` and ``GET /v3``), password authentication of
the service user (``POST /v3/auth/tokens``) and token validation
(``GET /v3/auth/tokens`` with ``X-Subject-Token``). Tokens are registered by
the test with :meth:`KeystoneStub.add_token`; an unknown token is 404, as
Keystone answers, and an expired one carries a past ``expires_at``.
"""

import datetime
import http.server
import json
import threading
import uuid

import fixtures

SERVICE_USER = 'nova'
SERVICE_PASSWORD = 'service-secret'
SERVICE_PROJECT = 'service'


def _iso(moment):
    return moment.strftime('%Y-%m-%dT%H:%M:%S.000000Z')


class KeystoneStub(fixtures.Fixture):

    def __init__(self):
        super().__init__()
        self.tokens = {}
        self.validations = 0

    def _setUp(self):
        stub = self

        class Handler(http.server.BaseHTTPRequestHandler):

            def log_message(self, *args):
                pass

            def _reply(self, status, body, headers=()):
                data = json.dumps(body).encode()
                self.send_response(status)
                self.send_header('Content-Type', 'application/json')
                self.send_header('Content-Length', str(len(data)))
                for name, value in headers:
                    self.send_header(name, value)
                self.end_headers()
                self.wfile.write(data)

            def do_GET(self):
                path = self.path.split('?')[0].rstrip('/')
                if path in ('', '/v3'):
                    return self._reply(200 if path else 300,
                                       stub.discovery(path))
                if path == '/v3/auth/tokens':
                    stub.validations += 1
                    token = stub.tokens.get(
                        self.headers.get('X-Subject-Token'))
                    if token is None or self.headers.get(
                            'X-Auth-Token') not in stub.tokens:
                        return self._reply(404, {'error': {
                            'code': 404, 'title': 'Not Found',
                            'message': 'Could not find token.'}})
                    return self._reply(200, token)
                return self._reply(404, {'error': {'code': 404}})

            def do_POST(self):
                length = int(self.headers.get('Content-Length') or 0)
                body = json.loads(self.rfile.read(length) or b'{}')
                if self.path.rstrip('/') != '/v3/auth/tokens':
                    return self._reply(404, {'error': {'code': 404}})
                try:
                    user = body['auth']['identity']['password']['user']
                    ok = (user['name'] == SERVICE_USER and
                          user['password'] == SERVICE_PASSWORD)
                except (KeyError, TypeError):
                    ok = False
                if not ok:
                    return self._reply(401, {'error': {'code': 401}})
                token_id = stub.add_token(SERVICE_USER, SERVICE_PROJECT,
                                          ['service', 'admin'])
                return self._reply(201, stub.tokens[token_id],
                                   [('X-Subject-Token', token_id)])

        self.server = http.server.ThreadingHTTPServer(('127.0.0.1', 0),
                                                      Handler)
        self.server.daemon_threads = True
        self.url = 'http://127.0.0.1:%d' % self.server.server_address[1]
        thread = threading.Thread(target=self.server.serve_forever,
                                  daemon=True, name='keystone-stub')
        thread.start()
        self.addCleanup(thread.join, 5)
        self.addCleanup(self.server.server_close)
        self.addCleanup(self.server.shutdown)

    def discovery(self, path):
        version = {'id': 'v3.14', 'status': 'stable',
                   'updated': '2020-04-07T00:00:00Z',
                   'links': [{'rel': 'self', 'href': self.url + '/v3/'}],
                   'media-types': [{
                       'base': 'application/json',
                       'type': 'application/vnd.openstack.identity-v3+json'}]}
        if path == '/v3':
            return {'version': version}
        return {'versions': {'values': [version]}}

    def add_token(self, user, project, roles, expired=False, token_id=None):
        """Register a token; returns its id."""
        token_id = token_id or uuid.uuid4().hex
        now = datetime.datetime.utcnow()
        expires = now + datetime.timedelta(
            hours=-1 if expired else 1)
        domain = {'id': 'default', 'name': 'Default'}
        self.tokens[token_id] = {'token': {
            'methods': ['password'],
            'issued_at': _iso(now - datetime.timedelta(hours=2)),
            'expires_at': _iso(expires),
            'user': {'id': 'id-' + user, 'name': user, 'domain': domain},
            'project': {'id': project, 'name': 'name-' + project,
                        'domain': domain},
            'roles': [{'id': 'id-' + role, 'name': role} for role in roles],
            'catalog': [{
                'type': 'identity', 'name': 'keystone', 'id': 'identity',
                'endpoints': [
                    {'id': interface, 'interface': interface,
                     'region': 'RegionOne', 'region_id': 'RegionOne',
                     'url': self.url + '/v3'}
                    for interface in ('public', 'internal', 'admin')]}],
        }}
        return token_id
