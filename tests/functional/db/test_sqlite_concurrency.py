"""Concurrent writers on a file SQLite database wait; none fails.

Nova fails a good share of concurrent force-downs on SQLite with
"database is locked". The engine the project's transaction context creates
for an SQLite file uses the write-ahead log and a busy timeout: eight
clients forcing services down and up through the real WSGI app, while
others list and heartbeat, all succeed; and a reader in the middle of a
long read transaction, which without the write-ahead log makes every
commit give up after the lock timeout, delays no writer.
"""

import logging
import sqlite3
import threading
import time

import fixtures
from oslo_utils import timeutils
from oslotest import base
import webob

from nova_forcedown.api import deploy
from nova_forcedown import context
from nova_forcedown.db import engine as db_engine
from nova_forcedown.servicegroup.drivers import db as db_driver
from tests.fixtures import configuration
from tests.fixtures import databases
from tests.fixtures import db_rows

ADMIN_TOKEN = 'admin:6f70656e737461636b'
WRITERS = 8
ROUNDS = 15


class _SqliteAppTestCase(base.BaseTestCase):
    """The real WSGI app on a migrated file SQLite database.

    The database is configured as the project configures its own, so its
    engine is created with the project's engine hooks.
    """

    # Query of the database URL; a test may set a short lock timeout.
    URL_QUERY = ''

    def setUp(self):
        super().setUp()
        # Heartbeats of forced-down services warn, many times over here.
        self.useFixture(fixtures.FakeLogger(name='nova_forcedown',
                                            level=logging.ERROR))
        database = self.useFixture(databases.ServiceSqliteFile(
            'nf-sqlite-concurrency-', url_query=self.URL_QUERY))
        self.path, self.engine = database.path, database.engine
        self.conf = self.useFixture(configuration.ConfFixture(
            api__auth_strategy='noauth2')).conf
        self.app = deploy.load_app(self.conf)
        ctxt = context.get_admin_context()
        self.services = [
            db_rows.create_service(ctxt, host='host%d' % number)
            for number in range(WRITERS)]

    def _request(self, method, path, version, body=None):
        request = webob.Request.blank(
            '/v2.1' + path, method=method, headers={
                'X-Auth-Token': ADMIN_TOKEN,
                'OpenStack-API-Version': 'compute ' + version})
        if body is not None:
            request.json_body = body
        return request.get_response(self.app)

    def _force_down_and_up(self, number, failures):
        service = self.services[number]
        for round_number in range(ROUNDS):
            for forced_down in (True, False):
                if round_number % 2:
                    response = self._request(
                        'PUT', '/os-services/%s' % service.uuid, '2.53',
                        {'forced_down': forced_down})
                else:
                    response = self._request(
                        'PUT', '/os-services/force-down', '2.11',
                        {'host': service.host, 'binary': 'nova-compute',
                         'forced_down': forced_down})
                if response.status_int != 200:
                    failures.append((service.host, response.status,
                                     response.text))

    def _read(self, failures, done):
        while not done.is_set():
            response = self._request('GET', '/os-services', '2.53')
            if response.status_int != 200:
                failures.append(('list', response.status, response.text))

    def _heartbeat(self, failures, done):
        while not done.is_set():
            for service in self.services:
                try:
                    db_driver.DbDriver.report_state(service)
                except Exception as exc:  # noqa: the test reports them
                    failures.append(('heartbeat', service.host, repr(exc)))


class TestConcurrentWritersOnSqlite(_SqliteAppTestCase):

    def test_journal_mode_is_wal(self):
        with self.engine.connect() as connection:
            mode = connection.exec_driver_sql('PRAGMA journal_mode').scalar()
            timeout = connection.exec_driver_sql(
                'PRAGMA busy_timeout').scalar()
        self.assertEqual('wal', mode)
        self.assertEqual(db_engine.SQLITE_BUSY_TIMEOUT_MS, timeout)

    def test_transactions_reuse_one_connection_with_its_settings(self):
        # Opening the file each time cost half of a one-row read.
        opened = set()
        for _ in range(3):
            with self.engine.connect() as connection:
                opened.add(id(connection.connection.dbapi_connection))
                timeout = connection.exec_driver_sql(
                    'PRAGMA busy_timeout').scalar()
                found = connection.exec_driver_sql(
                    "SELECT 'compute-1' REGEXP '^compute-[0-9]$'").scalar()
            self.assertEqual(db_engine.SQLITE_BUSY_TIMEOUT_MS, timeout)
            self.assertEqual(1, found)
        self.assertEqual(1, len(opened))

    def test_eight_writers_all_succeed(self):
        failures = []
        done = threading.Event()
        writers = [threading.Thread(target=self._force_down_and_up,
                                    args=(number, failures))
                   for number in range(WRITERS)]
        others = [threading.Thread(target=self._read,
                                   args=(failures, done)),
                  threading.Thread(target=self._heartbeat,
                                   args=(failures, done))]
        for thread in others + writers:
            thread.start()
        for thread in writers:
            thread.join(120)
        done.set()
        for thread in others:
            thread.join(60)
        self.assertEqual([], failures)
        listed = self._request('GET', '/os-services', '2.53').json
        self.assertEqual(
            [False] * WRITERS,
            [service['forced_down'] for service in listed['services']])
        with self.engine.connect() as connection:
            recorded = connection.exec_driver_sql(
                'SELECT count(*) FROM service_history').scalar()
        self.assertEqual(WRITERS * ROUNDS * 2, recorded)


class TestFenceStormGuardOnSqlite(_SqliteAppTestCase):
    """Eight force-downs at once, in a zone of eight, at a limit of half.

    Each reads the zone's services and counts them before it writes: were
    two to count before either wrote, both could pass. SQLite's write
    lock, taken first, makes them take turns.
    """

    def _force_down(self, service, version):
        if version == '2.53':
            return self._request('PUT', '/os-services/%s' % service.uuid,
                                 version, {'forced_down': True})
        return self._request('PUT', '/os-services/force-down', version,
                             {'host': service.host, 'binary': 'nova-compute',
                              'forced_down': True})

    def test_exactly_half_pass(self):
        self.conf.set_override('max_forced_down_fraction', 0.5,
                               group='fencing')
        barrier = threading.Barrier(WRITERS)
        statuses = []

        def force_down(number):
            barrier.wait()
            statuses.append(self._force_down(
                self.services[number], '2.53' if number % 2 else '2.11'
            ).status_int)

        threads = [threading.Thread(target=force_down, args=(number,))
                   for number in range(WRITERS)]
        for thread in threads:
            thread.start()
        for thread in threads:
            thread.join(60)
        half = WRITERS // 2
        self.assertEqual([200] * half + [409] * half, sorted(statuses))
        listed = self._request('GET', '/os-services', '2.53').json
        self.assertEqual(half, sum(service['forced_down']
                                   for service in listed['services']))
        with self.engine.connect() as connection:
            recorded = connection.exec_driver_sql(
                "SELECT count(*) FROM service_history "
                "WHERE event = 'force-down'").scalar()
        self.assertEqual(half, recorded)


class TestConcurrentServerActionsOnSqlite(_SqliteAppTestCase):
    """Actions read the server, then write it and its record.

    Eight clients locking and unlocking servers of their own, while others
    list servers: a transaction that read first and wrote later would fail
    at once with "database is locked" once another writer committed
    between its read and its write.
    """

    def _lock_and_unlock(self, uuid, failures):
        for _ in range(ROUNDS):
            for action in ('lock', 'unlock'):
                response = self._request('POST', '/servers/%s/action' % uuid,
                                         '2.73', {action: None})
                if response.status_int != 202:
                    failures.append((uuid, response.status, response.text))

    def _list_servers(self, failures, done):
        while not done.is_set():
            response = self._request('GET', '/servers/detail?all_tenants=1',
                                     '2.73')
            if response.status_int != 200:
                failures.append(('list', response.status, response.text))

    def test_eight_clients_all_succeed(self):
        ctxt = context.get_admin_context()
        uuids = [db_rows.create_instance(ctxt, service.host).uuid
                 for service in self.services]
        failures = []
        done = threading.Event()
        writers = [threading.Thread(target=self._lock_and_unlock,
                                    args=(uuid, failures)) for uuid in uuids]
        reader = threading.Thread(target=self._list_servers,
                                  args=(failures, done))
        for thread in [reader] + writers:
            thread.start()
        for thread in writers:
            thread.join(120)
        done.set()
        reader.join(60)
        self.assertEqual([], failures)
        with self.engine.connect() as connection:
            recorded = connection.exec_driver_sql(
                'SELECT count(*) FROM instance_actions').scalar()
        self.assertEqual(WRITERS * ROUNDS * 2, recorded)

    def test_concurrent_stops_of_one_server_let_exactly_one_in(self):
        ctxt = context.get_admin_context()
        uuid = db_rows.create_instance(
            ctxt, 'host0', launched_at=timeutils.utcnow()).uuid
        barrier = threading.Barrier(WRITERS)
        statuses = []

        def stop():
            barrier.wait()
            statuses.append(self._request(
                'POST', '/servers/%s/action' % uuid, '2.1',
                {'os-stop': None}).status_int)

        threads = [threading.Thread(target=stop) for _ in range(WRITERS)]
        for thread in threads:
            thread.start()
        for thread in threads:
            thread.join(60)
        self.assertEqual([202] + [409] * (WRITERS - 1), sorted(statuses))


class TestConcurrentMetadataOnSqlite(_SqliteAppTestCase):
    """Eight clients add an item each to one server's metadata at once.

    Each merge reads the server's metadata and writes it back: two that
    read before either wrote would lose one item. The write lock, taken
    first, makes them take turns.
    """

    def test_every_item_lands(self):
        ctxt = context.get_admin_context()
        uuid = db_rows.create_instance(
            ctxt, 'host0', launched_at=timeutils.utcnow()).uuid
        barrier = threading.Barrier(WRITERS)
        statuses = []

        def merge(number):
            barrier.wait()
            statuses.append(self._request(
                'POST', '/servers/%s/metadata' % uuid, '2.1',
                {'metadata': {'client-%d' % number: 'x'}}).status_int)

        threads = [threading.Thread(target=merge, args=(number,))
                   for number in range(WRITERS)]
        for thread in threads:
            thread.start()
        for thread in threads:
            thread.join(60)
        self.assertEqual([200] * WRITERS, statuses)
        metadata = self._request('GET', '/servers/%s/metadata' % uuid,
                                 '2.1').json['metadata']
        self.assertEqual(WRITERS, len(metadata))


class TestLongReadOnSqlite(_SqliteAppTestCase):
    """A reader holding a read transaction never makes a writer fail.

    Without the write-ahead log, a commit waits for every reader to finish
    and gives up after the lock timeout (1 s here) with "database is
    locked"; with it, readers and the writer do not block each other.
    """

    URL_QUERY = '?timeout=1'

    def test_a_long_read_never_fails_a_writer(self):
        reader = sqlite3.connect(self.path, isolation_level=None)
        self.addCleanup(reader.close)
        reader.execute('BEGIN')
        reader.execute('SELECT count(*) FROM services').fetchall()
        try:
            failures = []
            started = time.monotonic()
            while time.monotonic() - started < 2.5:
                self._force_down_and_up(0, failures)
        finally:
            reader.execute('ROLLBACK')
        self.assertEqual([], failures)


class TestRefusedWritesOnSqlite(_SqliteAppTestCase):
    """A write refused midway leaves SQLite's lock to the next writer.

    A stop of a locked server is refused (409) once its transaction holds
    the write lock; were the lock not released with the rollback, every
    later writer would wait out the lock timeout and answer 503.
    """

    URL_QUERY = '?timeout=1'

    def test_writers_after_refusals_succeed(self):
        ctxt = context.get_admin_context()
        locked, free = (db_rows.create_instance(ctxt, service.host).uuid
                        for service in self.services[:2])
        self._request('POST', '/servers/%s/action' % locked, '2.73',
                      {'lock': None})
        statuses = []

        def refuse_then_write():
            for _ in range(3):
                for uuid, action in ((locked, 'os-stop'), (free, 'lock'),
                                     (free, 'unlock')):
                    statuses.append(self._request(
                        'POST', '/servers/%s/action' % uuid, '2.73',
                        {action: None}).status_int)

        threads = [threading.Thread(target=refuse_then_write)
                   for _ in range(2)]
        for thread in threads:
            thread.start()
        for thread in threads:
            thread.join(60)
        self.assertEqual([202] * 12 + [409] * 6, sorted(statuses))
