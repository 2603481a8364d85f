"""Upgrading a populated pre-forced_down database while it is being read.

A database at revision 0001_initial (services without forced_down) is
filled with services, compute nodes and instances as a deployment of that
era holds them, written with plain SQL at the old schema. A reader thread
keeps listing it (services joined with their compute nodes, and the
instances per host) while ``nova-forcedown-manage db sync`` upgrades it:
every listing, before, during and after, succeeds and returns every row.
Afterwards nothing is lost or changed, every service has forced_down =
false, and the new code lists it (``nova-forcedown-manage service list``).
"""

import os
import threading
import time
import uuid

import fixtures
import sqlalchemy as sa
import testtools

from nova_forcedown.db import schema
from tests.fixtures import figures
from tests.fixtures import processes
from tests.fixtures import server_database

INITIAL = '0001_initial'
HOSTS = 150
INSTANCES_PER_HOST = 2
# The reader stops after this long or this many listings.
READER_LIMIT_SECONDS = 60
READER_LIMIT_LISTINGS = 20000

_LISTING = sa.text(
    'SELECT s.id, s.host, s.disabled, s.disabled_reason, s.report_count, '
    'n.id AS node_id, n.hypervisor_hostname, n.vcpus '
    'FROM services s JOIN compute_nodes n ON n.service_id = s.id '
    'WHERE s.deleted = 0 AND n.deleted = 0 ORDER BY n.id')
_INSTANCES = sa.text(
    'SELECT host, count(*) AS servers FROM instances WHERE deleted = 0 '
    'GROUP BY host')


def _old_schema_rows():
    """Services, nodes and instances without any forced_down column."""
    services, nodes, instances = [], [], []
    for i in range(1, HOSTS + 1):
        host = 'legacy-%d' % i
        services.append({
            'id': i, 'uuid': str(uuid.uuid4()), 'host': host,
            'binary': 'nova-compute', 'topic': 'compute',
            'report_count': i * 7, 'disabled': i % 5 == 0,
            'disabled_reason': 'maintenance %d' % i if i % 5 == 0 else None,
            'version': 1, 'deleted': i if i % 50 == 0 else 0})
        nodes.append({
            'id': i, 'uuid': str(uuid.uuid4()), 'service_id': i,
            'host': host, 'hypervisor_hostname': host + '.example.org',
            'hypervisor_type': 'QEMU', 'hypervisor_version': 8002000,
            'cpu_info': '{}', 'vcpus': 32, 'memory_mb': 65536,
            'local_gb': 500, 'vcpus_used': i % 32, 'memory_mb_used': 1024,
            'local_gb_used': 10, 'deleted': 0})
        for j in range(INSTANCES_PER_HOST):
            instances.append({
                'uuid': str(uuid.uuid4()), 'display_name': '%s-vm%d' % (
                    host, j), 'host': host, 'node': host,
                'vm_state': 'active', 'deleted': 0})
    services.append({
        'id': HOSTS + 1, 'uuid': None, 'host': 'controller',
        'binary': 'nova-scheduler', 'topic': 'scheduler', 'report_count': 3,
        'disabled': False, 'disabled_reason': None, 'version': 1,
        'deleted': 0})
    return {'services': services, 'compute_nodes': nodes,
            'instances': instances}


class _UpgradeMixin:

    BACKEND = None

    def database_url(self):
        database = self.useFixture(server_database.ServerDatabase(
            self.BACKEND, migrate=False))
        return database.url_text

    def setUp(self):
        super().setUp()
        self.url = self.database_url()
        self.engine = sa.create_engine(self.url)
        self.addCleanup(self.engine.dispose)
        schema.db_sync(self.engine, revision=INITIAL)
        self.rows = _old_schema_rows()
        metadata = sa.MetaData()
        metadata.reflect(self.engine)
        self.assertNotIn('forced_down', metadata.tables['services'].c)
        with self.engine.begin() as connection:
            for name in ('services', 'compute_nodes', 'instances'):
                connection.execute(metadata.tables[name].insert(),
                                   self.rows[name])
        state = self.useFixture(fixtures.TempDir()).path
        self.config = processes.write_config(state, (
            '[DEFAULT]\nstate_path = %s\n[database]\nconnection = %s\n'
            % (state, self.url)))

    def _manage(self, *args):
        return processes.run([processes.script('nova-forcedown-manage'),
                              '--config-file', self.config, *args],
                             timeout=120)

    def _expected(self):
        live = {row['id'] for row in self.rows['services']
                if row['deleted'] == 0}
        listing = [row['id'] for row in self.rows['compute_nodes']
                   if row['service_id'] in live]
        servers = {}
        for row in self.rows['instances']:
            servers[row['host']] = servers.get(row['host'], 0) + 1
        return listing, servers

    def _reader(self, stop, outcome):
        expected_nodes, expected_servers = self._expected()
        deadline = time.monotonic() + READER_LIMIT_SECONDS
        while (not stop.is_set() and time.monotonic() < deadline and
               outcome['listings'] < READER_LIMIT_LISTINGS):
            try:
                with self.engine.connect() as connection:
                    nodes = [row.node_id for row in
                             connection.execute(_LISTING)]
                    servers = {row.host: row.servers for row in
                               connection.execute(_INSTANCES)}
            except Exception as exc:  # noqa: every failure is recorded
                outcome['errors'].append(repr(exc))
                continue
            outcome['listings'] += 1
            if nodes != expected_nodes or servers != expected_servers:
                outcome['errors'].append('listing %d: %d nodes, %d hosts'
                                         % (outcome['listings'], len(nodes),
                                            len(servers)))

    def test_db_sync_under_a_reader_loses_nothing(self):
        before = self._snapshot()
        outcome = {'listings': 0, 'errors': []}
        stop = threading.Event()
        reader = threading.Thread(target=self._reader, args=(stop, outcome))
        reader.start()
        self.assertTrue(processes.wait_until(
            lambda: outcome['listings'] >= 5))
        listings_before = outcome['listings']
        started = time.monotonic()
        result = self._manage('db', 'sync')
        sync_seconds = time.monotonic() - started
        listings_during = outcome['listings'] - listings_before
        processes.wait_until(
            lambda: outcome['listings'] >= listings_before +
            listings_during + 5)
        stop.set()
        reader.join(READER_LIMIT_SECONDS + 10)

        self.assertEqual(0, result.returncode, result.stderr)
        self.assertEqual(schema.head_revision(),
                         schema.db_version(self.engine))
        figures.record(self, backend=self.BACKEND,
                       listings=outcome['listings'],
                       listings_during_sync=listings_during,
                       failures=len(outcome['errors']),
                       rows_lost=self._lost(before),
                       sync_seconds=round(sync_seconds, 2))
        self.assertEqual([], outcome['errors'][:10])
        self.assertEqual(0, self._lost(before))
        forced = self._query('SELECT forced_down FROM services')
        self.assertEqual(len(self.rows['services']), len(forced))
        self.assertFalse(any(row[0] for row in forced))

        listing = self._manage('service', 'list')
        self.assertEqual(0, listing.returncode, listing.stderr)
        for service in self.rows['services']:
            if service['deleted'] == 0:
                self.assertIn(service['host'], listing.stdout)
        self.assertNotIn('legacy-50 ', listing.stdout)

    def _query(self, sql):
        with self.engine.connect() as connection:
            return connection.execute(sa.text(sql)).all()

    def _snapshot(self):
        """Every row of the old schema's columns, by table."""
        snapshot = {}
        with self.engine.connect() as connection:
            for name, rows in self.rows.items():
                columns = sorted(rows[0])
                table = sa.table(name, *[sa.column(c) for c in columns])
                snapshot[name] = connection.execute(
                    sa.select(table).order_by(table.c.uuid)).all()
        return snapshot

    def _lost(self, before):
        after = self._snapshot()
        return sum(len(set(before[name]) ^ set(after[name]))
                   for name in before)


class TestUpgradePostgreSQL(_UpgradeMixin, testtools.TestCase):
    BACKEND = 'postgresql'


class TestUpgradeMySQL(_UpgradeMixin, testtools.TestCase):
    BACKEND = 'mysql'


class TestUpgradeSqlite(_UpgradeMixin, testtools.TestCase):
    BACKEND = 'sqlite'

    def database_url(self):
        path = os.path.join(self.useFixture(fixtures.TempDir()).path,
                            'legacy.sqlite')
        # The reader waits for the migration's lock instead of failing.
        return 'sqlite:///%s?timeout=30' % path
