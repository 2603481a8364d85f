"""Text in requests: the same answer on SQLite, PostgreSQL and MariaDB.

PostgreSQL cannot store a NUL character in text, SQLite and MariaDB keep
it; no backend can store a lone surrogate (``"\\ud800"`` in JSON). The API
refuses both, with a 400 and before it runs a single SQL statement, in a
body, a path or a query string, as it refuses bytes that are not UTF-8.
Every other string (control characters, non-characters, the astral plane)
is stored and returned exactly as sent, on every backend. The tests drive
the real WSGI app built from api-paste.ini on each real database.
"""

import hypothesis
from hypothesis import strategies as st
from oslo_serialization import jsonutils
import sqlalchemy as sa
import webob

from nova_forcedown.api import deploy
from nova_forcedown.api import encoding
from nova_forcedown.api import validation
from nova_forcedown.db import models
from tests.fixtures import configuration
from tests.fixtures import databases
from tests.fixtures import db_rows
from tests.fixtures import raw_requests
from tests.fixtures import sql_statements

ADMIN_TOKEN = b'admin:6f70656e737461636b'
FORBIDDEN = ['\x00', 'maintenance\x00', '\ud800', 'a\udfffb', '\udbff',
             '\udc00\ud800']
STORED_ALIKE = ['tab\there', 'line\nbreak\r\n', '\x1b[31mred\x1b[0m',
                '\x01\x02\x7f\x80\x85\x9f', 'caf\xe9 \u2603 \u2028',
                '\U0001f525 astral \U0010fffd', '\ufeff\ufffe\uffff',
                ' padded  ', 'x' * 255, '\U0001f525' * 255]


def _reason_bodies(reason, uuid):
    """Every write that carries a disabled_reason, with ``reason``."""
    return [
        ('/v2.1/os-services/disable-log-reason', '2.11',
         {'host': 'host1', 'binary': 'nova-compute',
          'disabled_reason': reason}),
        ('/v2/os-services/disable-log-reason', None,
         {'host': 'host1', 'binary': 'nova-compute',
          'disabled_reason': reason}),
        ('/v2.1/os-services/' + uuid, '2.53',
         {'status': 'disabled', 'disabled_reason': reason}),
    ]


class TextOnBackendsMixin:

    def setUp(self):
        super().setUp()
        if self.engine.dialect.name == 'mysql':
            self._connect_as_documented()
        conf = self.useFixture(configuration.ConfFixture(
            api__auth_strategy='noauth2')).conf
        self.app = deploy.load_app(conf)
        self.service = db_rows.create_service(self.context, host='host1')

    def _connect_as_documented(self):
        """Talk utf8mb4 to MariaDB, as the install guide's URL asks.

        oslo.db's test URL has no ``charset`` and oslo.db then connects
        with MySQL's three-byte ``utf8``, which cannot carry a character
        beyond U+FFFF whatever the table's own character set.
        """
        def _utf8mb4(dbapi_connection, connection_record):
            dbapi_connection.set_charset('utf8mb4')
        sa.event.listen(self.engine, 'connect', _utf8mb4)
        self.addCleanup(sa.event.remove, self.engine, 'connect', _utf8mb4)
        self.engine.dispose()

    def _send(self, method, target, version=None, body=None):
        environ = raw_requests.wsgi_environ(
            method, target, raw_requests.json_headers(ADMIN_TOKEN, version),
            body)
        with sql_statements.recorded_statements(self.engine) as statements:
            resp = webob.Request(environ).get_response(self.app)
        return resp, statements

    def _row(self):
        table = models.Service.__table__
        with self.engine.connect() as connection:
            return dict(connection.execute(sa.select(table).where(
                table.c.id == self.service.id)).one()._mapping)

    def _put_reason(self, reason):
        """Each write of ``reason``: (path, response, statements)."""
        for path, version, body in _reason_bodies(reason, self.service.uuid):
            resp, statements = self._send(
                'PUT', path.encode(), version,
                jsonutils.dump_as_bytes(body))
            yield path, resp, statements

    def _assert_refused_unread(self, resp, statements, what):
        self.assertEqual(400, resp.status_code, '%s: %s' % (what, resp.body))
        self.assertIn('badRequest', jsonutils.loads(resp.body), what)
        self.assertEqual([], statements, what)

    def test_nul_and_surrogates_are_refused_before_the_database(self):
        before = self._row()
        for reason in FORBIDDEN:
            for path, resp, statements in self._put_reason(reason):
                what = '%s %r' % (path, reason)
                self._assert_refused_unread(resp, statements, what)
                self.assertEqual(
                    validation.BAD_STRING % 'disabled_reason',
                    resp.json['badRequest']['message'], what)
        self.assertEqual(before, self._row())

    def test_bytes_in_paths_and_queries_are_refused_before_the_database(
            self):
        before = self._row()
        uuid = self.service.uuid.encode()
        for method, target, version, message in (
                ('GET', b'/v2.1/os-services?host=%00', None,
                 encoding.QUERY_NUL),
                ('GET', b'/v2.1/os-services?host=host1%ff', None,
                 encoding.QUERY_NOT_UTF8),
                ('GET', b'/v2.1/os-services?binary=nova-\xed\xa0\x80', None,
                 encoding.QUERY_NOT_UTF8),
                ('GET', b'/v2.1/os-hypervisors?hypervisor_hostname_pattern='
                 b'host%00', '2.53', encoding.QUERY_NUL),
                ('GET', b'/v2.1/os-hypervisors/host1%00/search', None,
                 encoding.PATH_NUL),
                ('GET', b'/v2.1/os-hypervisors/%c0%af', None,
                 encoding.PATH_NOT_UTF8),
                ('DELETE', b'/v2.1/os-services/' + uuid + b'%00', '2.53',
                 encoding.PATH_NUL),
                ('PUT', b'/v2.1/os-services/' + uuid + b'\xff', '2.53',
                 encoding.PATH_NOT_UTF8)):
            resp, statements = self._send(method, target, version,
                                          b'{"status": "disabled"}'
                                          if method == 'PUT' else None)
            self._assert_refused_unread(resp, statements, repr(target))
            self.assertEqual(message, resp.json['badRequest']['message'])
        self.assertEqual(before, self._row())

    def test_other_text_is_stored_and_returned_exactly(self):
        for reason in STORED_ALIKE:
            for path, resp, statements in self._put_reason(reason):
                what = '%s %r' % (path, reason)
                self.assertEqual(200, resp.status_code,
                                 '%s: %s' % (what, resp.body))
                self.assertEqual(reason, self._row()['disabled_reason'],
                                 what)
                listing, _ = self._send('GET', b'/v2.1/os-services', '2.53')
                (service,) = [item for item in listing.json['services']
                              if item['host'] == 'host1']
                self.assertEqual(reason, service['disabled_reason'], what)

    @hypothesis.settings(max_examples=25, deadline=None, derandomize=True,
                         database=None, print_blob=False,
                         suppress_health_check=list(hypothesis.HealthCheck))
    @hypothesis.given(reason=st.text(st.one_of(
        st.characters(), st.sampled_from(['\x00', '\ud800', '\udfff'])),
        max_size=260))
    def test_any_reason_gets_one_answer(self, reason):
        forbidden = '\x00' in reason or any(
            0xd800 <= ord(char) <= 0xdfff for char in reason)
        valid = not forbidden and 1 <= len(reason) <= 255
        before = self._row()
        for path, resp, statements in self._put_reason(reason):
            what = '%s %r' % (path, reason)
            if valid:
                self.assertEqual(200, resp.status_code,
                                 '%s: %s' % (what, resp.body))
                self.assertEqual(reason, self._row()['disabled_reason'],
                                 what)
            else:
                self._assert_refused_unread(resp, statements, what)
                self.assertEqual(before, self._row(), what)


databases.backend_test_cases(TextOnBackendsMixin, globals())
