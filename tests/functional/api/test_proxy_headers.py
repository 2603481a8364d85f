"""Links name the proxy's URL only when the proxy is trusted.

``[oslo_middleware] enable_proxy_headers_parsing`` (default false) says
that a TLS-terminating proxy in front of the API sets the forwarding
headers; oslo.middleware then reads ``Forwarded`` (RFC 7239) or, without
it, ``X-Forwarded-Proto`` and ``X-Forwarded-Host``. ``X-Forwarded-Ssl`` and
``X-Forwarded-Protocol`` are never read: nothing a client sends changes the
links of a server that does not expect a proxy. An empty ``Host`` header
gives links to the server's own address.

Links checked: the version list, the v2.1 version document and the next
link of a paged hypervisor listing, from the real app on a real database.
"""

from oslotest import base
import testscenarios
import webob

from nova_forcedown.api import deploy
from tests.fixtures import api_app
from tests.fixtures import api_world
from tests.fixtures import configuration

load_tests = testscenarios.load_tests_apply_scenarios

HOST = 'api.example.org'
ADMIN = 'admin:' + api_world.ADMIN_PROJECT

# (headers, base URL of the links while parsing is on)
FORWARDED = {
    'X-Forwarded-Proto': ({'X-Forwarded-Proto': 'https'},
                          'https://' + HOST),
    'X-Forwarded-Ssl': ({'X-Forwarded-Ssl': 'on'}, 'http://' + HOST),
    'X-Forwarded-Protocol': ({'X-Forwarded-Protocol': 'ssl'},
                             'http://' + HOST),
    'Forwarded': ({'Forwarded': 'for=192.0.2.60;proto=https;'
                                'host=cloud.example.org'},
                  'https://cloud.example.org'),
    'X-Forwarded-Host': ({'X-Forwarded-Proto': 'https',
                          'X-Forwarded-Host': 'cloud.example.org:8443'},
                         'https://cloud.example.org:8443'),
    'X-Forwarded-Prefix': ({'X-Forwarded-Proto': 'https',
                            'X-Forwarded-Prefix': '/compute'},
                           'https://' + HOST + '/compute'),
}


class TestProxyHeaders(base.BaseTestCase):

    scenarios = [('parsing off', {'parsing': False}),
                 ('parsing on', {'parsing': True})]

    def setUp(self):
        super().setUp()
        self.world = self.useFixture(api_app.ApiWorld(api_world.SEEDED))
        conf = configuration.api_conf()
        self.addCleanup(conf.reset)
        self.app = deploy.load_app(conf)
        # Registered by the middleware itself, so set once the app is built.
        conf.set_override('enable_proxy_headers_parsing', self.parsing,
                          group='oslo_middleware')

    def _get(self, path, headers, environ, version=None):
        req = webob.Request.blank(path, environ=dict(environ))
        req.headers.update(headers)
        if version:
            req.headers['OpenStack-API-Version'] = 'compute ' + version
        resp = req.get_response(self.app)
        self.assertEqual(200, resp.status_code, resp.body)
        return resp.json_body

    def links(self, headers, environ=None):
        environ = environ or {'HTTP_HOST': HOST}
        hrefs = [version['links'][0]['href'] for version in
                 self._get('/', headers, environ)['versions']]
        hrefs.append(self._get('/v2.1', headers, environ)
                     ['version']['links'][0]['href'])
        page = self._get('/v2.1/os-hypervisors?limit=1',
                         dict(headers, **{'X-Auth-Token': ADMIN}), environ,
                         version='2.33')
        hrefs.append(page['hypervisors_links'][0]['href'])
        return hrefs

    def assertLinksStartWith(self, base_url, hrefs, label):
        wrong = [href for href in hrefs
                 if not href.startswith(base_url + '/v2')]
        self.assertEqual([], wrong,
                         '%s: links not under %s' % (label, base_url))

    def test_no_forwarding_headers(self):
        self.assertLinksStartWith('http://' + HOST, self.links({}), 'none')

    def test_forwarding_headers(self):
        for name, (headers, trusted) in FORWARDED.items():
            want = trusted if self.parsing else 'http://' + HOST
            self.assertLinksStartWith(want, self.links(headers), name)

    def test_empty_host_header_gives_the_servers_own_address(self):
        environ = {'HTTP_HOST': '', 'SERVER_NAME': '192.0.2.10',
                   'SERVER_PORT': '8774'}
        self.assertLinksStartWith('http://192.0.2.10:8774',
                                  self.links({}, environ), 'empty Host')
        headers, _ = FORWARDED['X-Forwarded-Proto']
        self.assertLinksStartWith(
            ('https' if self.parsing else 'http') + '://192.0.2.10:8774',
            self.links(headers, environ), 'empty Host, X-Forwarded-Proto')
