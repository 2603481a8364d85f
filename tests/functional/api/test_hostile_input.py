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

Bytes, too: request targets, query strings, header values and bodies are
built as bytes (invalid UTF-8 sequences, encoded surrogates, overlong forms,
NUL; raw or percent-encoded) and handed to the app as a WSGI server does,
latin-1 decoded. Every such request is a 400 badRequest that names what is
wrong. Bodies nest arrays and objects to any depth, and reach the app in
pieces that break off. The log of every request is captured: never a
traceback, never an ERROR for a client's mistake, and a refused request
logs at most one INFO line.
"""

import io
import logging
import string
import urllib.parse

import fixtures as test_fixtures
from gunicorn.http import errors as gunicorn_errors
import hypothesis
from hypothesis import strategies as st
from oslo_serialization import jsonutils
from oslotest import base
import sqlalchemy as sa
import webob

from nova_forcedown.api import deploy
from nova_forcedown.api import encoding
from nova_forcedown.api import fault
from nova_forcedown.api import validation
from nova_forcedown.db import models
from tests.fixtures import api_app
from tests.fixtures import api_world
from tests.fixtures import configuration
from tests.fixtures import figures
from tests.fixtures import raw_requests

BODY_LIMIT = 4096
ADMIN = 'admin:' + api_world.ADMIN_PROJECT

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
MEMBER = 'user:' + api_world.USER_PROJECT
# Mostly none; else a tag, a list, a weak one, any, or anything at all.
IF_MATCHES = st.one_of(
    st.none(), st.none(), st.none(),
    st.sampled_from(['*', '"0"', '"a", "b"', 'W/"0"', '""', ',', 'x',
                     '"' + '0' * 32 + '"']),
    HEADER_TEXT)
TOKENS = st.sampled_from([ADMIN, ADMIN, ADMIN, MEMBER,
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
# Bodies of POST /os-host-servers/{host}/action: its actions' keys with
# values of the right shape or not, and every body above.
HOST_SERVERS_BODIES = st.one_of(BODIES, st.dictionaries(
    st.sampled_from(['mark_shutdown', 'os-resetState']),
    st.one_of(JSON, st.fixed_dictionaries({'state': st.one_of(
        st.sampled_from(['active', 'error']), JSON)})),
    min_size=1, max_size=2).map(jsonutils.dump_as_bytes))
# Bodies of /servers/{id}/metadata[/{key}]: its keys with items of the
# right shape or not, and every body above.
METADATA_BODIES = st.one_of(BODIES, st.dictionaries(
    st.sampled_from(['metadata', 'meta']),
    st.one_of(JSON, st.dictionaries(
        st.one_of(st.sampled_from(['HA_Enabled', 'x' * 256, 'a/b', '']),
                  st.text(max_size=20)), JSON, max_size=3)),
    min_size=1, max_size=2).map(jsonutils.dump_as_bytes))
# Bodies of POST /flavors/{id}/action: its actions' keys with a tenant of
# the right shape or not, and every body above.
FLAVOR_BODIES = st.one_of(BODIES, st.dictionaries(
    st.sampled_from(['addTenantAccess', 'removeTenantAccess']),
    st.one_of(JSON, st.fixed_dictionaries({'tenant': JSON})),
    min_size=1, max_size=2).map(jsonutils.dump_as_bytes))
HOST_NAMES = ['host1', 'host2', 'host3', 'host4', 'controller', 'ghost',
              'nowhere', 'host1.example.org', 'x' * 300]
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
    '/v2.1', '/v2.1', '/v2.1/' + api_world.ADMIN_PROJECT, '/v2',
    '/v2/' + api_world.ADMIN_PROJECT, '/v2.1/' + api_world.USER_PROJECT,
    '/v2.1/not-a-project', ''])
PATH_TEXT = st.text(string.ascii_letters + string.digits + '-._~%:@!$&+,;=',
                    max_size=40)


def _segment(text):
    return urllib.parse.quote(text, safe='')


# Byte sequences that are not UTF-8 (a stray continuation byte, a lead byte
# cut short, an overlong '/', encoded surrogates, a code point past
# U+10FFFF, bytes UTF-8 never uses), and NUL.
NOT_UTF8 = st.sampled_from([
    b'\xff', b'\xfe', b'\x80', b'\xbf', b'\xc3', b'\xe2\x82', b'\xf0\x9f\x98',
    b'\xc0\xaf', b'\xe0\x80\xaf', b'\xed\xa0\x80', b'\xed\xbf\xbf',
    b'\xed\xa0\xbd\xed\xb8\x80', b'\xf4\x90\x80\x80', b'\xf8\x88\x80\x80\x80',
    b'\xc3\x28', b'\xa9'])
POISON = st.one_of(NOT_UTF8, NOT_UTF8, st.just(b'\x00'))
# Text that is valid anywhere: no NUL, no control character (headers).
CLEAN_TEXT = st.text(st.characters(blacklist_categories=('Cc', 'Cs')),
                     max_size=12)
HEADER_NAMES = ['X-Auth-Token', 'OpenStack-API-Version',
                'X-OpenStack-Nova-API-Version', 'Accept', 'Content-Type',
                'User-Agent', 'X-Roles', 'X-OpenStack-Request-ID',
                'X-Forwarded-Proto', 'Forwarded', 'Authorization', 'Host',
                'X-Anything', 'If-Match']
BYTE_PATHS = ['/v2.1/os-services', '/v2.1/os-services/{id}',
              '/v2.1/{id}/os-services', '/v2/{id}/os-hypervisors/{id}/search',
              '/v2.1/os-hypervisors/{id}', '/v2.1/os-hypervisors/detail',
              '/{id}', '/v2.1/{id}', '/healthcheck', '/healthcheck/{id}',
              '/', '/v2', '/v2.1', '/v2.1/extensions/{id}']
BYTE_WRITES = [('PUT', '/v2.1/os-services/disable-log-reason', '2.11'),
               ('PUT', '/v2.1/os-services/force-down', '2.11'),
               ('PUT', '/v2/os-services/disable', None),
               ('PUT', '/v2.1/os-services/{uuid}', '2.53'),
               ('POST', '/v2.1/os-aggregates', '2.41'),
               ('POST', '/v2.1/os-aggregates/1/action', '2.41'),
               ('POST', '/v2.1/flavors', '2.61'),
               ('POST', '/v2.1/flavors/1/os-extra_specs', '2.61'),
               ('POST', '/v2.1/flavors/1/action', '2.7'),
               ('POST', '/v2.1/servers/{uuid}/action', '2.73'),
               ('POST', '/v2.1/servers/{uuid}/metadata', '2.1'),
               ('POST', '/v2.1/os-host-servers/host3/action', '2.1')]


def _header_title(name):
    """A header's name as the filter spells it from the WSGI environ."""
    return name.title()


def _nest(depth, kind):
    """A JSON text of ``depth`` arrays or objects, one inside the other."""
    if kind == 'array':
        return '[' * depth + ']' * depth
    return '{"a": ' * depth + '1' + '}' * depth


class _HostileInputTestCase(base.BaseTestCase):
    """The app on a seeded SQLite file; a snapshot guards every request."""

    def setUp(self):
        super().setUp()
        self.conf = configuration.api_conf(
            **{'wsgi.max_request_body_size': BODY_LIMIT})
        self.database = self.useFixture(api_app.ApiWorld())
        self.app = deploy.load_app(self.conf)
        self.database.add(api_world.COMPUTE_HOSTS)
        self.ids = self._known_ids()
        self.snapshot = self._snapshot()
        self.logs = self.useFixture(test_fixtures.FakeLogger(
            level=logging.INFO, format='%(levelname)s %(name)s %(message)s'))
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

    def _server_ids(self):
        """The servers' uuids, a key they have, and every other id."""
        with self.database.engine.connect() as connection:
            uuids = [row.uuid for row in connection.execute(
                sa.select(models.Instance.__table__.c.uuid))]
        return uuids + ['HA_Enabled'] + self.ids

    def _snapshot(self):
        with self.database.engine.connect() as connection:
            return {table.name: connection.execute(
                sa.select(table).order_by(*table.primary_key.columns)).all()
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
        return self.send_environ(req.environ)

    def send_raw(self, method, target, headers=(), body=None):
        """Send ``target`` and ``headers`` as bytes, as a server gets them."""
        return self.send_environ(raw_requests.wsgi_environ(
            method, target, headers, body))

    def send_environ(self, environ):
        self.requests += 1
        self.log_start = len(self.logs.output)
        return webob.Request(environ).get_response(self.app)

    def request_log(self):
        """The lines logged since the last request was sent."""
        return self.logs.output[self.log_start:].splitlines()

    def check(self, req_text, resp, method):
        """No 5xx, no traceback, JSON faults, no write when refused."""
        text = resp.body.decode('utf-8', 'replace')
        self.assertLess(resp.status_code, 500, '%s -> %s %s' % (
            req_text, resp.status, text[:500]))
        for marker in ('Traceback', 'File "/', 'sqlalchemy', 'webob.exc',
                       'jsonschema'):
            self.assertNotIn(marker, text, req_text)
        log = self.request_log()
        self.assertFalse([line for line in log if 'Traceback' in line or
                          line.startswith(('ERROR', 'CRITICAL'))],
                         '%s logged %s' % (req_text, log))
        if 400 <= resp.status_code < 500:
            self.assertLessEqual(len(log), 1,
                                 '%s logged %s' % (req_text, log))
            self.assertTrue(all(line.startswith('INFO ') for line in log),
                            '%s logged %s' % (req_text, log))
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
            'If-Match': data.draw(IF_MATCHES, 'if match'),
        }

    def _path_id(self, data, ids=None):
        ids = ids or self.ids
        return data.draw(st.one_of(
            st.sampled_from(ids), st.sampled_from(ids),
            st.uuids().map(str), st.integers().map(str), PATH_TEXT,
            st.text(max_size=30).filter(lambda text: text not in ('', '.',
                                                                  '..'))
        ).map(_segment), 'id')

    def _run(self, data, paths, ids=None, bodies=BODIES):
        method = data.draw(METHODS, 'method')
        prefix = data.draw(PREFIXES, 'prefix')
        path = prefix + data.draw(st.sampled_from(paths), 'path').format(
            id=self._path_id(data, ids) or 'x')
        query = data.draw(QUERIES, 'query')
        headers = self._headers(data)
        body = data.draw(bodies, 'body') if method in ('PUT', 'POST',
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
    def test_aggregates_and_zones(self, data):
        self._run(data, ['/os-aggregates', '/os-aggregates/{id}',
                         '/os-aggregates/{id}/action',
                         '/os-aggregates/{id}/images',
                         '/os-availability-zone',
                         '/os-availability-zone/detail'])

    @SETTINGS
    @hypothesis.given(data=st.data())
    def test_flavors(self, data):
        self._run(data, ['/flavors', '/flavors/detail', '/flavors/{id}',
                         '/flavors/{id}/os-extra_specs',
                         '/flavors/{id}/os-extra_specs/{id}',
                         '/flavors/{id}/os-flavor-access',
                         '/flavors/{id}/action'], bodies=FLAVOR_BODIES)

    @SETTINGS
    @hypothesis.given(data=st.data())
    def test_servers(self, data):
        self._run(data, ['/servers', '/servers/detail', '/servers/{id}',
                         '/servers/{id}/action',
                         '/servers/{id}/os-instance-actions',
                         '/servers/{id}/os-instance-actions/{id}',
                         '/servers/{id}/migrations',
                         '/servers/{id}/migrations/{id}'])

    @SETTINGS
    @hypothesis.given(data=st.data())
    def test_server_metadata(self, data):
        self._run(data, ['/servers/{id}/metadata',
                         '/servers/{id}/metadata/{id}'],
                  ids=self._server_ids(), bodies=METADATA_BODIES)

    @SETTINGS
    @hypothesis.given(data=st.data())
    def test_host_servers(self, data):
        self._run(data, ['/os-host-servers/{id}/action',
                         '/os-host-servers/{id}'], ids=HOST_NAMES,
                  bodies=HOST_SERVERS_BODIES)

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


class TestGeneratedBytes(_HostileInputTestCase):
    """Bytes that are not UTF-8, or NUL, in one place of a request."""

    def _clean_target(self, data):
        """A request target of valid UTF-8, percent-encoded as clients do."""
        template = data.draw(st.sampled_from(BYTE_PATHS), 'path')
        while '{id}' in template:
            template = template.replace('{id}', _segment(data.draw(
                st.one_of(st.sampled_from(self.ids), CLEAN_TEXT.filter(
                    lambda text: text not in ('', '.', '..'))), 'id')), 1)
        query = urllib.parse.urlencode(data.draw(st.lists(st.tuples(
            st.sampled_from(QUERY_NAMES), CLEAN_TEXT), max_size=3), 'query'))
        return template, query

    def _headers(self, data):
        return [('X-Auth-Token', ADMIN.encode()),
                ('Content-Type', b'application/json')] + data.draw(
            st.lists(st.tuples(st.sampled_from(HEADER_NAMES[1:4]),
                               st.sampled_from([b'compute 2.53', b'2.11',
                                                b'application/json'])),
                     max_size=2), 'more headers')

    def _poisoned(self, data, quoted):
        """``quoted`` with poison bytes between two of its characters.

        The poison goes in raw or percent-encoded; the text around it stays
        percent-encoded, as a client sends it.
        """
        text = urllib.parse.unquote(quoted)
        poison = data.draw(POISON, 'poison')
        raw = data.draw(st.booleans(), 'raw bytes')
        spliced = poison if raw else urllib.parse.quote_from_bytes(
            poison, safe='').encode()
        cut = data.draw(st.integers(0, len(text)), 'cut')
        return (_segment(text[:cut]).encode() + spliced +
                _segment(text[cut:]).encode(), poison == b'\x00')

    def _expect(self, resp, message, req_text, method='GET'):
        self.assertEqual(400, resp.status_code, '%s -> %s %s' % (
            req_text, resp.status, resp.body[:300]))
        if method != 'HEAD':
            self.assertEqual(
                {'badRequest': {'code': 400, 'message': message}},
                jsonutils.loads(resp.body), req_text)
        self.assertEqual(1, len(self.request_log()), req_text)

    @hypothesis.settings(SETTINGS, max_examples=80)
    @hypothesis.given(data=st.data())
    def test_bytes_in_the_path(self, data):
        template, query = self._clean_target(data)
        segments = template.split('/')
        where = data.draw(st.integers(1, len(segments) - 1), 'segment')
        segment, nul = self._poisoned(data, segments[where])
        target = b'/'.join([part.encode() for part in segments[:where]] +
                           [segment] +
                           [part.encode() for part in segments[where + 1:]])
        if query:
            target += b'?' + query.encode()
        method = data.draw(METHODS, 'method')
        resp = self.send_raw(method, target, self._headers(data))
        req_text = '%s %r' % (method, target)
        self.check(req_text, resp, method)
        self._expect(resp, encoding.PATH_NUL if nul
                     else encoding.PATH_NOT_UTF8, req_text, method)

    @hypothesis.settings(SETTINGS, max_examples=80)
    @hypothesis.given(data=st.data())
    def test_bytes_in_the_query_string(self, data):
        template, query = self._clean_target(data)
        name = data.draw(st.sampled_from(QUERY_NAMES), 'name')
        value, nul = self._poisoned(data, _segment(data.draw(CLEAN_TEXT,
                                                             'value')))
        if data.draw(st.booleans(), 'poison the name'):
            pair = value + b'=' + b'1'
        else:
            pair = name.encode() + b'=' + value
        pairs = [pair] + ([query.encode()] if query else [])
        target = template.encode() + b'?' + b'&'.join(
            data.draw(st.permutations(pairs), 'order'))
        method = data.draw(st.sampled_from(['GET', 'PUT', 'DELETE']),
                           'method')
        resp = self.send_raw(method, target, self._headers(data))
        req_text = '%s %r' % (method, target)
        self.check(req_text, resp, method)
        self._expect(resp, encoding.QUERY_NUL if nul
                     else encoding.QUERY_NOT_UTF8, req_text)

    @hypothesis.settings(SETTINGS, max_examples=80)
    @hypothesis.given(data=st.data())
    def test_bytes_in_a_header(self, data):
        template, query = self._clean_target(data)
        name = data.draw(st.sampled_from(HEADER_NAMES), 'header')
        text = data.draw(CLEAN_TEXT, 'value')
        cut = data.draw(st.integers(0, len(text)), 'cut')
        poison = data.draw(st.one_of(POISON, st.sampled_from(
            [b'\r', b'\n', b'\r\n', b'\x1b', b'\x7f', b'\x01'])), 'poison')
        value = text[:cut].encode() + poison + text[cut:].encode()
        headers = [(header, value) for header, value in self._headers(data)
                   if header.lower() != name.lower()] + [(name, value)]
        target = template.encode() + (b'?' + query.encode() if query
                                      else b'')
        method = data.draw(st.sampled_from(['GET', 'PUT']), 'method')
        resp = self.send_raw(method, target, headers)
        req_text = '%s %r %s: %r' % (method, target, name, value)
        self.check(req_text, resp, method)
        try:
            value.decode('utf-8')
            message = encoding.HEADER_CONTROL
        except UnicodeDecodeError:
            message = encoding.HEADER_NOT_UTF8
        self._expect(resp, message % _header_title(name), req_text)

    @hypothesis.settings(SETTINGS, max_examples=80)
    @hypothesis.given(data=st.data())
    def test_bytes_and_forbidden_strings_in_a_body(self, data):
        method, path, version = data.draw(st.sampled_from(BYTE_WRITES),
                                          'endpoint')
        path = path.format(uuid=data.draw(st.sampled_from(
            [i for i in self.ids if len(i) == 36]), 'uuid'))
        body = data.draw(SHAPED_BODIES, 'body')
        # Put a forbidden string somewhere in the document: a key or a
        # value, at the top or nested.
        forbidden = data.draw(st.sampled_from(
            ['\x00', 'a\x00', '\ud800', 'x\udfff', '\udbff\ud800',
             '\ud83d']), 'forbidden')
        holder = body
        for key in data.draw(st.lists(st.sampled_from(SCHEMA_KEYS),
                                      max_size=3), 'nesting'):
            holder[key] = {}
            holder = holder[key]
        if data.draw(st.booleans(), 'as key'):
            holder[forbidden] = 'x'
        else:
            holder[data.draw(st.sampled_from(SCHEMA_KEYS), 'key')] = forbidden
        encoded = jsonutils.dump_as_bytes(body)
        if data.draw(st.booleans(), 'raw bytes instead'):
            poison = data.draw(NOT_UTF8, 'bytes')
            cut = encoded.index(b'{') + 1
            encoded = encoded[:cut] + b'"' + poison + b'": 1, ' + (
                encoded[cut:] if encoded[cut:] != b'}' else b'"x": 1}')
        headers = raw_requests.json_headers(ADMIN.encode(), version)
        resp = self.send_raw(method, path.encode(), headers, encoded)
        req_text = '%s %s %r' % (method, path, encoded[:300])
        self.check(req_text, resp, method)
        self.assertEqual(400, resp.status_code, req_text)
        message = jsonutils.loads(resp.body)['badRequest']['message']
        self.assertTrue(
            message == validation.MALFORMED_BODY or message.endswith(
                'must not contain NUL characters or unpaired surrogates.'),
            '%s: %s' % (req_text, message))

    @hypothesis.settings(SETTINGS, max_examples=60)
    @hypothesis.given(depth=st.integers(1, 2000),
                      kind=st.sampled_from(['array', 'object']),
                      inside=st.booleans(),
                      endpoint=st.sampled_from(BYTE_WRITES[:3]))
    def test_nesting_depth(self, depth, kind, inside, endpoint):
        method, path, version = endpoint
        nest = _nest(depth, kind)
        if inside:
            # One level more: the object around the nest.
            depth += 1
            nest = ('{"host": "host1", "binary": "nova-compute", '
                    '"disabled_reason": %s}' % nest)
        body = nest.encode()
        hypothesis.assume(len(body) <= BODY_LIMIT)
        headers = raw_requests.json_headers(ADMIN.encode(), version)
        resp = self.send_raw(method, path.encode(), headers, body)
        req_text = '%s %s depth %d (%d bytes)' % (method, path, depth,
                                                  len(body))
        self.check(req_text, resp, method)
        self.assertEqual(400, resp.status_code, req_text)
        message = jsonutils.loads(resp.body)['badRequest']['message']
        if depth > validation.MAX_BODY_DEPTH:
            self.assertEqual(validation.MALFORMED_BODY, message, req_text)
        else:
            # Parsed, then refused by the schema as the wrong shape.
            self.assertNotEqual(validation.MALFORMED_BODY, message,
                                req_text)

    def test_a_two_kilobyte_nest_of_arrays_is_malformed(self):
        resp = self.send('PUT', '/v2.1/os-services/disable', headers={
            'X-Auth-Token': ADMIN, 'Content-Type': 'application/json'},
            body=b'[' * 1024 + b']' * 1024)
        self.check('2 KB of nested arrays', resp, 'PUT')
        self.assertEqual({'badRequest': {'code': 400, 'message':
                                         'Malformed request body'}},
                         jsonutils.loads(resp.body))

    def test_the_issue_examples(self):
        for target, message in (
                (b'/v2.1/os-services?host=%ff', encoding.QUERY_NOT_UTF8),
                (b'/%ff', encoding.PATH_NOT_UTF8),
                (b'/\xff', encoding.PATH_NOT_UTF8),
                (b'/v2.1/os-services/%ed%a0%80', encoding.PATH_NOT_UTF8),
                (b'/v2.1/%ff/os-services', encoding.PATH_NOT_UTF8),
                (b'/healthcheck?x=%ff', encoding.QUERY_NOT_UTF8),
                (b'/v2.1/os-services?host=%00', encoding.QUERY_NUL)):
            for token in (ADMIN.encode(), None):
                headers = [('X-Auth-Token', token)] if token else []
                resp = self.send_raw('GET', target, headers)
                self.check(repr(target), resp, 'GET')
                self._expect(resp, message, repr(target))
                self.assertIn('INFO nova_forcedown.api.fault Client error '
                              '400: ' + message, self.request_log()[0])


class _BrokenInput(io.RawIOBase):
    """A request body stream that gives ``data``, then raises ``error``."""

    def __init__(self, data, error):
        self.data = data
        self.error = error

    def readable(self):
        return True

    def readinto(self, buffer):
        if not self.data:
            raise self.error
        size = min(len(buffer), len(self.data))
        buffer[:size] = self.data[:size]
        self.data = self.data[size:]
        return size


class TestBrokenTransfers(_HostileInputTestCase):
    """Bodies that break off while the app reads them: 400, one line."""

    BODY = b'{"host": "host1", "binary": "nova-compute", "disabled_reason": "'

    def _send(self, stream, content_length):
        environ = raw_requests.wsgi_environ(
            'PUT', b'/v2.1/os-services/disable-log-reason',
            [('X-Auth-Token', ADMIN.encode()),
             ('Content-Type', b'application/json'),
             ('OpenStack-API-Version', b'compute 2.11')])
        environ['wsgi.input'] = stream
        if content_length is None:
            # Chunked: the server says where the body ends.
            environ.pop('CONTENT_LENGTH', None)
            environ['HTTP_TRANSFER_ENCODING'] = 'chunked'
            environ['wsgi.input_terminated'] = True
        else:
            environ['CONTENT_LENGTH'] = str(content_length)
        return self.send_environ(environ)

    def _assert_refused(self, resp, what, cause):
        self.check(what, resp, 'PUT')
        self.assertEqual({'badRequest': {
            'code': 400, 'message': fault.BODY_NOT_RECEIVED_MESSAGE}},
            jsonutils.loads(resp.body), what)
        (line,) = self.request_log()
        self.assertTrue(line.startswith(
            'INFO nova_forcedown.api.fault Request body not received in '
            'full: ' + cause), line)

    def test_fewer_bytes_than_content_length(self):
        # The client went away: the server's stream ends early.
        resp = self._send(io.BytesIO(self.BODY), 1000)
        self._assert_refused(resp, 'short body', 'DisconnectionError')

    def test_the_server_reports_a_lost_client(self):
        # uWSGI raises OSError when the client goes away mid-body.
        for content_length in (1000, None):
            resp = self._send(_BrokenInput(b'', OSError(
                'error waiting for wsgi.input data')), content_length)
            self._assert_refused(resp, 'OSError', 'OSError')

    def test_gunicorn_reports_a_bad_chunk(self):
        for error in (gunicorn_errors.InvalidChunkSize(b'zz'),
                      gunicorn_errors.ChunkMissingTerminator(b'xx'),
                      gunicorn_errors.NoMoreData(b'')):
            resp = self._send(_BrokenInput(self.BODY, error), None)
            self._assert_refused(resp, repr(error), type(error).__name__)

    def test_a_control_character_in_the_cause_stays_escaped(self):
        resp = self._send(_BrokenInput(self.BODY, OSError(
            'lost \x1b[31m\rERROR forged\nERROR forged line')), None)
        self._assert_refused(resp, 'control characters',
                             'OSError: lost \\x1b[31m\\rERROR forged\\nERROR')

    def test_a_chunked_body_over_the_limit_is_still_413(self):
        resp = self._send(_BrokenInput(
            self.BODY + b'x' * (BODY_LIMIT * 2), OSError('never reached')),
            None)
        self.check('chunked, too long', resp, 'PUT')
        self.assertEqual(413, resp.status_code, resp.body)
