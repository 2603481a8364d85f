"""Hostile input: generated requests to every endpoint of the real app.

hypothesis builds methods, paths (known and nonsense ids, unicode,
overlong), query strings, headers (microversions in both headers, content
types, tokens, roles) and bodies (schema-shaped, arbitrary JSON, invalid
bytes) and sends them to the WSGI app built from api-paste.ini, on a real
migrated SQLite database seeded with hosts in every state. Whatever comes
in: no 5xx, no traceback text in a body, every error is Nova's JSON fault,
and a rejected (4xx) request writes nothing (the database is compared with
a snapshot taken before it). Bodies over [wsgi] max_request_body_size get
413. Examples are derandomised, so every run sends the same requests.
"""

import string
import urllib.parse

import hypothesis
from hypothesis import strategies as st
from oslo_serialization import jsonutils
from oslotest import base
import sqlalchemy as sa
import webob

from nova_forcedown.api import deploy
from nova_forcedown.db import models
from nova_forcedown.tests.functional.api import fixtures
from nova_forcedown.tests.functional import figures

BODY_LIMIT = 4096
ADMIN = 'admin:' + fixtures.ADMIN_PROJECT

SETTINGS = hypothesis.settings(
    max_examples=200, deadline=None, derandomize=True, database=None,
    suppress_health_check=list(hypothesis.HealthCheck),
    print_blob=False)

# Latin-1 text without control characters, as a WSGI header value can be.
HEADER_TEXT = st.text(st.characters(min_codepoint=32, max_codepoint=255,
                                    blacklist_characters='\x7f'),
                      max_size=40)
ANY_TEXT = st.text(max_size=300)
VERSIONS = st.one_of(
    st.sampled_from(['2.1', '2.10', '2.11', '2.28', '2.32', '2.33', '2.52',
                     '2.53', '2.74', '2.75', '2.87', '2.88', '2.104',
                     '2.105', '3.0', '1.0', '2.01', 'latest', 'Latest', '',
                     '2', '2.', '.1', '-2.1', '2.99999999999999999999']),
    st.from_regex(r'\A[0-9]{1,3}\.[0-9]{1,5}\Z'), HEADER_TEXT)
TOKENS = st.sampled_from([ADMIN, ADMIN, ADMIN, 'user:' + fixtures.USER_PROJECT,
                          '', 'admin', ':', 'admin:', 'x' * 300, 'admin:%%'])

JSON_LEAVES = st.one_of(
    st.none(), st.booleans(), st.integers(min_value=-2 ** 70,
                                          max_value=2 ** 70),
    st.floats(allow_nan=False, allow_infinity=False), ANY_TEXT,
    st.sampled_from(['True', 'true', 'FALSE', 'on', 'No', '1', '0', 't',
                     'enabled', 'disabled', 'nova-compute', 'host1', 'host2',
                     'host3', 'controller', 'x' * 256, ' True', '']))
JSON = st.recursive(JSON_LEAVES, lambda inner: st.one_of(
    st.lists(inner, max_size=4),
    st.dictionaries(st.text(max_size=20), inner, max_size=4)), max_leaves=12)
SCHEMA_KEYS = ['host', 'binary', 'forced_down', 'status', 'disabled_reason']
SHAPED_BODIES = st.dictionaries(
    st.one_of(st.sampled_from(SCHEMA_KEYS), st.text(max_size=12)),
    JSON, max_size=5)
BODIES = st.one_of(
    st.none(),
    SHAPED_BODIES.map(jsonutils.dump_as_bytes),
    SHAPED_BODIES.map(jsonutils.dump_as_bytes),
    JSON.map(jsonutils.dump_as_bytes),
    st.binary(max_size=200),
    st.text(max_size=200).map(lambda text: text.encode('utf-8')))
CONTENT_TYPES = st.one_of(st.sampled_from([
    'application/json', 'application/json', 'application/json; charset=utf-8',
    'text/plain', 'application/xml', '', 'multipart/form-data; boundary=x',
    'application/x-www-form-urlencoded']), HEADER_TEXT)
ACCEPTS = st.one_of(st.none(), st.sampled_from([
    '*/*', 'text/html', 'application/xml', 'application/json', 'text/plain',
    'application/vnd.openstack.compute+json;version=2.1']), HEADER_TEXT)
QUERY_NAMES = ['host', 'binary', 'limit', 'marker', 'with_servers',
               'hypervisor_hostname_pattern', 'detailed', 'all_tenants']
QUERIES = st.lists(st.tuples(
    st.one_of(st.sampled_from(QUERY_NAMES), st.text(max_size=10)),
    st.one_of(st.sampled_from(['true', 'false', '0', '1', '-1', '100',
                               '99999999999999999999', 'host1', '%', '_',
                               '']), st.text(max_size=40))), max_size=4)
METHODS = st.sampled_from(['GET', 'GET', 'PUT', 'PUT', 'DELETE', 'POST',
                           'PATCH', 'HEAD', 'OPTIONS'])
PREFIXES = st.sampled_from([
    '/v2.1', '/v2.1', '/v2.1/' + fixtures.ADMIN_PROJECT, '/v2',
    '/v2/' + fixtures.ADMIN_PROJECT, '/v2.1/' + fixtures.USER_PROJECT,
    '/v2.1/not-a-project', ''])
PATH_TEXT = st.text(string.ascii_letters + string.digits + '-._~%:@!$&+,;=',
                    max_size=40)


def _segment(text):
    return urllib.parse.quote(text, safe='')


class _HostileInputTestCase(base.BaseTestCase):
    """The app on a seeded SQLite file; a snapshot guards every request."""

    def setUp(self):
        super().setUp()
        self.conf = fixtures.make_conf(
            **{'wsgi.max_request_body_size': BODY_LIMIT})
        self.database = fixtures.Database()
        self.addCleanup(self.database.close)
        self.app = deploy.load_app(self.conf)
        fixtures.ComputeHostsFixture().start_fixture()
        self.ids = self._known_ids()
        self.snapshot = self._snapshot()
        self.requests = 0
        self.addCleanup(lambda: figures.record(
            self, backend='sqlite', requests_sent=self.requests))

    def _known_ids(self):
        with self.database.engine.connect() as connection:
            ids = []
            for table in (models.Service.__table__,
                          models.ComputeNode.__table__):
                for row in connection.execute(
                        sa.select(table.c.id, table.c.uuid)):
                    ids += [str(row.id), row.uuid]
        return ids + ['host1', 'host_3', 'ghost', 'extensions',
                      'os-hypervisor-status', 'force-down', 'enable',
                      'disable', 'disable-log-reason', 'detail',
                      'statistics', '0', '-1', str(2 ** 31), str(2 ** 64)]

    def _snapshot(self):
        with self.database.engine.connect() as connection:
            return {table.name: connection.execute(
                sa.select(table).order_by(table.c.id)).all()
                for table in models.Base.metadata.sorted_tables}

    def _restore(self, snapshot):
        with self.database.engine.begin() as connection:
            for table in reversed(models.Base.metadata.sorted_tables):
                connection.execute(table.delete())
            for table in models.Base.metadata.sorted_tables:
                rows = [dict(row._mapping) for row in snapshot[table.name]]
                if rows:
                    connection.execute(table.insert(), rows)

    def send(self, method, path, query=(), headers=None, body=None):
        req = webob.Request.blank(path, method=method)
        if query:
            req.query_string = urllib.parse.urlencode(list(query))
        for name, value in (headers or {}).items():
            if value is not None:
                req.headers[name] = value
        if body is not None:
            req.body = body
        self.requests += 1
        return req.get_response(self.app)

    def check(self, req_text, resp, method):
        """No 5xx, no traceback, JSON faults, no write when refused."""
        text = resp.body.decode('utf-8', 'replace')
        self.assertLess(resp.status_code, 500, '%s -> %s %s' % (
            req_text, resp.status, text[:500]))
        for marker in ('Traceback', 'File "/', 'sqlalchemy', 'webob.exc',
                       'jsonschema'):
            self.assertNotIn(marker, text, req_text)
        if resp.status_code >= 400 and method != 'HEAD':
            self.assertEqual('application/json', resp.content_type, req_text)
            fault = jsonutils.loads(resp.body)
            (detail,) = fault.values()
            self.assertEqual(resp.status_code, detail['code'], req_text)
        after = self._snapshot()
        if after != self.snapshot:
            self.assertLess(resp.status_code, 400,
                            'a refused request wrote: ' + req_text)
            self.assertNotIn(method, ('GET', 'HEAD'),
                             'a read wrote: ' + req_text)
            # Accepted writes are undone, so every example starts alike.
            self._restore(self.snapshot)


class TestGeneratedRequests(_HostileInputTestCase):

    def _headers(self, data):
        return {
            'X-Auth-Token': data.draw(TOKENS, 'token'),
            'OpenStack-API-Version': data.draw(
                st.one_of(st.none(), VERSIONS.map('compute {}'.format),
                          HEADER_TEXT), 'version'),
            'X-OpenStack-Nova-API-Version': data.draw(
                st.one_of(st.none(), st.none(), VERSIONS),
                'legacy version'),
            'Content-Type': data.draw(CONTENT_TYPES, 'content type'),
            'Accept': data.draw(ACCEPTS, 'accept'),
            'X-Roles': data.draw(st.one_of(st.none(), HEADER_TEXT), 'roles'),
        }

    def _path_id(self, data):
        return data.draw(st.one_of(
            st.sampled_from(self.ids), st.sampled_from(self.ids),
            st.uuids().map(str), st.integers().map(str), PATH_TEXT,
            st.text(max_size=30).filter(lambda text: text not in ('', '.',
                                                                  '..'))
        ).map(_segment), 'id')

    def _run(self, data, paths):
        method = data.draw(METHODS, 'method')
        prefix = data.draw(PREFIXES, 'prefix')
        path = prefix + data.draw(st.sampled_from(paths), 'path').format(
            id=self._path_id(data) or 'x')
        query = data.draw(QUERIES, 'query')
        headers = self._headers(data)
        body = data.draw(BODIES, 'body') if method in ('PUT', 'POST',
                                                       'PATCH') else None
        req_text = '%s %s?%s %r %r' % (method, path, query, headers,
                                       (body or b'')[:200])
        self.check(req_text, self.send(method, path, query, headers, body),
                   method)

    @SETTINGS
    @hypothesis.given(data=st.data())
    def test_services(self, data):
        self._run(data, ['/os-services', '/os-services/{id}'])

    @SETTINGS
    @hypothesis.given(data=st.data())
    def test_hypervisors(self, data):
        self._run(data, ['/os-hypervisors', '/os-hypervisors/detail',
                         '/os-hypervisors/statistics', '/os-hypervisors/{id}',
                         '/os-hypervisors/{id}/uptime',
                         '/os-hypervisors/{id}/search',
                         '/os-hypervisors/{id}/servers'])

    @SETTINGS
    @hypothesis.given(data=st.data())
    def test_versions_extensions_and_unknown_paths(self, data):
        self._run(data, ['', '/', '/extensions', '/extensions/{id}',
                         '/versions/v2.1', '/{id}', '/{id}/{id}',
                         '/healthcheck', '/os-services/{id}/{id}'])


class TestBodySizeLimit(_HostileInputTestCase):

    WRITES = [('PUT', '/v2.1/os-services/force-down', '2.11'),
              ('PUT', '/v2.1/os-services/disable-log-reason', '2.11'),
              ('PUT', '/v2/os-services/enable', None),
              ('POST', '/v2.1/os-services', '2.53'),
              ('GET', '/v2.1/os-hypervisors', '2.53')]

    @hypothesis.settings(SETTINGS, max_examples=60)
    @hypothesis.given(
        size=st.integers(min_value=BODY_LIMIT + 1,
                         max_value=BODY_LIMIT * 64),
        endpoint=st.sampled_from(WRITES), padding=st.sampled_from(' x\n'))
    def test_bodies_over_the_limit_get_413(self, size, endpoint, padding):
        method, path, version = endpoint
        prefix = b'{"host": "host1", "binary": "nova-compute", "x": "'
        body = prefix + padding.encode() * (size - len(prefix) - 2) + b'"}'
        self.assertEqual(size, len(body))
        headers = {'X-Auth-Token': ADMIN, 'Content-Type': 'application/json'}
        if version:
            headers['OpenStack-API-Version'] = 'compute ' + version
        resp = self.send(method, path, headers=headers, body=body)
        self.assertEqual(413, resp.status_code, resp.body[:300])
        self.assertEqual(413, jsonutils.loads(resp.body)['overLimit']['code'])
        self.check('%s %s (%d bytes)' % (method, path, size), resp, method)

    def test_a_body_at_the_limit_is_read(self):
        prefix = b'{"host": "host1", "binary": "nova-compute", "x": "'
        body = prefix + b'x' * (BODY_LIMIT - len(prefix) - 2) + b'"}'
        resp = self.send('PUT', '/v2.1/os-services/enable', headers={
            'X-Auth-Token': ADMIN, 'Content-Type': 'application/json'},
            body=body)
        # Read and validated: the extra property is refused, not the size.
        self.assertEqual(400, resp.status_code, resp.body)
        self.assertIn("'x' was unexpected", resp.body.decode())
