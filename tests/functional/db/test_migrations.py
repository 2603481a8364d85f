"""Schema migrations on real SQLite, PostgreSQL and MariaDB databases.

Each test starts from an empty, freshly provisioned database.
"""

import base64
import json
import logging

from alembic import config as alembic_config
from alembic import script as alembic_script
import fixtures
from oslo_db import exception as db_exc
from oslo_db.sqlalchemy import test_migrations
import sqlalchemy as sa

from nova_forcedown.db import models
from nova_forcedown.db import schema
from tests.fixtures import databases
from tests.fixtures import sql_statements

INITIAL = '0001_initial'
FORCED_DOWN = '0002_services_forced_down'
AGGREGATES = '0003_aggregates'
FLAVORS = '0004_flavors'
SERVERS = '0005_servers'
INSTANCE_ACTIONS = '0006_instance_actions'
SERVICE_HISTORY = '0007_service_history'
MIGRATIONS = '0008_migrations'
RPC_SERVER = '0009_services_rpc_server'
INSTANCE_FAULTS = '0010_instance_faults'
SERVER_DETAILS = '0011_server_details'
SUPPORTED_INSTANCES = '0012_supported_instances'
USER_DATA_AND_TAGS = '0013_user_data_and_tags'

# Rows as a pre-mark-host-down deployment holds them, written without the
# models, which already know forced_down.
_LEGACY_SERVICES = [
    {'id': 1, 'uuid': 'a3c0e0b4-4ae8-4a43-9d3b-1b8c3c4f2c01',
     'host': 'compute1', 'binary': 'nova-compute', 'topic': 'compute',
     'report_count': 42, 'disabled': False, 'disabled_reason': None,
     'deleted': 0},
    {'id': 2, 'uuid': 'a3c0e0b4-4ae8-4a43-9d3b-1b8c3c4f2c02',
     'host': 'compute2', 'binary': 'nova-compute', 'topic': 'compute',
     'report_count': 7, 'disabled': True, 'disabled_reason': 'maintenance',
     'deleted': 0},
    {'id': 3, 'uuid': None,
     'host': 'controller', 'binary': 'nova-scheduler', 'topic': 'scheduler',
     'report_count': 0, 'disabled': False, 'disabled_reason': None,
     'deleted': 0},
    {'id': 4, 'uuid': 'a3c0e0b4-4ae8-4a43-9d3b-1b8c3c4f2c04',
     'host': 'compute3', 'binary': 'nova-compute', 'topic': 'compute',
     'report_count': 3, 'disabled': False, 'disabled_reason': None,
     'deleted': 4},
]

_LEGACY_INSTANCES = [
    {'id': 1, 'uuid': 'b1c0e0b4-4ae8-4a43-9d3b-1b8c3c4f2c01',
     'name': 'vm1', 'host': 'compute1', 'vm_state': 'active'},
    {'id': 2, 'uuid': 'b1c0e0b4-4ae8-4a43-9d3b-1b8c3c4f2c02',
     'name': 'vm2', 'host': 'compute2', 'vm_state': 'building'},
]

_INSERT_LEGACY_SERVICE = sa.text(
    'INSERT INTO services (id, uuid, host, "binary", topic, report_count, '
    'disabled, disabled_reason, version, created_at, deleted) VALUES '
    '(:id, :uuid, :host, :binary, :topic, :report_count, :disabled, '
    ':disabled_reason, 1, CURRENT_TIMESTAMP, :deleted)')


def _revisions_oldest_first():
    config = alembic_config.Config()
    config.set_main_option('script_location', schema.MIGRATIONS_DIR)
    scripts = alembic_script.ScriptDirectory.from_config(config)
    return [script.revision for script in
            reversed(list(scripts.walk_revisions()))]


def _columns(engine, table):
    return {column['name'] for column in sa.inspect(engine).get_columns(table)}


def _insert_legacy_services(engine):
    statement = _INSERT_LEGACY_SERVICE
    if engine.dialect.name == 'mysql':
        # MySQL quotes identifiers with backticks unless ANSI_QUOTES is set.
        statement = sa.text(str(statement).replace('"binary"', '`binary`'))
    with engine.begin() as connection:
        connection.execute(statement, _LEGACY_SERVICES)


def _services(engine):
    with engine.connect() as connection:
        rows = connection.execute(sa.text(
            'SELECT id, host, report_count, disabled, disabled_reason, '
            'deleted, forced_down FROM services ORDER BY id')).mappings()
        return [dict(row) for row in rows]


def _zone_aggregates(engine):
    """(aggregate name, host, availability zone) of every zone member."""
    with engine.connect() as connection:
        return [tuple(row) for row in connection.execute(sa.text(
            'SELECT a.name, h.host, m.value FROM aggregates a '
            'JOIN aggregate_hosts h ON h.aggregate_id = a.id '
            'JOIN aggregate_metadata m ON m.aggregate_id = a.id '
            "WHERE m.key = 'availability_zone' ORDER BY a.name, h.host"))]


class MigrationsMixin:

    def test_empty_database_has_no_revision(self):
        self.assertIsNone(schema.db_version(self.engine))

    def test_walk_up_one_revision_at_a_time(self):
        revisions = _revisions_oldest_first()
        self.assertEqual([INITIAL, FORCED_DOWN, AGGREGATES, FLAVORS, SERVERS,
                          INSTANCE_ACTIONS, SERVICE_HISTORY, MIGRATIONS,
                          RPC_SERVER, INSTANCE_FAULTS, SERVER_DETAILS,
                          SUPPORTED_INSTANCES, USER_DATA_AND_TAGS],
                         revisions)
        for revision in revisions:
            schema.db_sync(self.engine, revision)
            self.assertEqual(revision, schema.db_version(self.engine))
        self.assertEqual(schema.head_revision(),
                         schema.db_version(self.engine))

    def test_each_upgrade_is_one_log_line(self):
        # alembic logs each revision's first paragraph: an operator's log
        # reader (and grep) needs it on one line.
        log = self.useFixture(fixtures.FakeLogger(
            name='alembic.runtime.migration', level=logging.INFO,
            format='RECORD %(message)s'))
        schema.db_sync(self.engine)
        lines = log.output.splitlines()
        self.assertEqual([], [line for line in lines
                              if not line.startswith('RECORD ')])
        self.assertEqual(len(_revisions_oldest_first()),
                         sum('Running upgrade' in line for line in lines))

    def test_initial_schema_predates_forced_down(self):
        schema.db_sync(self.engine, INITIAL)
        self.assertNotIn('forced_down', _columns(self.engine, 'services'))
        schema.db_sync(self.engine, FORCED_DOWN)
        self.assertIn('forced_down', _columns(self.engine, 'services'))

    def test_upgrade_keeps_every_row_and_none_is_forced_down(self):
        schema.db_sync(self.engine, INITIAL)
        _insert_legacy_services(self.engine)

        schema.db_sync(self.engine)

        services = _services(self.engine)
        self.assertEqual([1, 2, 3, 4], [row['id'] for row in services])
        for legacy, row in zip(_LEGACY_SERVICES, services):
            self.assertFalse(row['forced_down'])
            self.assertEqual(legacy['host'], row['host'])
            self.assertEqual(legacy['report_count'], row['report_count'])
            self.assertEqual(legacy['disabled'], bool(row['disabled']))
            self.assertEqual(legacy['disabled_reason'],
                             row['disabled_reason'])
            self.assertEqual(legacy['deleted'], row['deleted'])

    def test_zones_of_services_become_aggregates_and_no_row_is_lost(self):
        schema.db_sync(self.engine, FORCED_DOWN)
        _insert_legacy_services(self.engine)
        zones = {1: 'az1', 2: 'az1', 3: 'az2', 4: 'az3'}
        with self.engine.begin() as connection:
            for service_id, zone in zones.items():
                connection.execute(sa.text(
                    'UPDATE services SET availability_zone = :zone '
                    'WHERE id = :id'), {'zone': zone, 'id': service_id})

        schema.db_sync(self.engine)

        self.assertNotIn('availability_zone',
                         _columns(self.engine, 'services'))
        self.assertEqual([1, 2, 3, 4], [row['id'] for row in
                                        _services(self.engine)])
        # Live compute services only: the scheduler (3) and the deleted
        # compute (4) made no zone.
        self.assertEqual([('az1', 'compute1', 'az1'),
                          ('az1', 'compute2', 'az1')],
                         _zone_aggregates(self.engine))

    def test_instances_keep_their_rows_and_get_server_defaults(self):
        schema.db_sync(self.engine, FLAVORS)
        with self.engine.begin() as connection:
            connection.execute(sa.text(
                'INSERT INTO instances (id, uuid, display_name, host, node, '
                'vm_state, power_state, created_at, deleted) VALUES '
                '(:id, :uuid, :name, :host, :host, :vm_state, 1, '
                "'2026-01-02 03:04:05', 0)"), _LEGACY_INSTANCES)

        schema.db_sync(self.engine)

        with self.engine.connect() as connection:
            rows = [dict(row) for row in connection.execute(sa.text(
                'SELECT id, uuid, display_name, host, vm_state, project_id, '
                'flavor, locked_by, config_drive, user_metadata, '
                'launched_at, reservation_id, network_info '
                'FROM instances ORDER BY id')).mappings()]
        self.assertEqual([1, 2], [row['id'] for row in rows])
        for legacy, row in zip(_LEGACY_INSTANCES, rows):
            self.assertEqual(legacy['uuid'], row['uuid'])
            self.assertEqual(legacy['name'], row['display_name'])
            self.assertEqual(legacy['host'], row['host'])
            self.assertIsNone(row['project_id'])
            self.assertEqual(
                {'flavorid': 'fake.small', 'name': 'fake.small',
                 'memory_mb': 4096, 'vcpus': 2, 'root_gb': 40,
                 'ephemeral_gb': 0, 'swap': 0, 'extra_specs': {}},
                json.loads(row['flavor']))
            self.assertIsNone(row['locked_by'])
            self.assertIsNone(row['user_metadata'])
            self.assertIsNone(row['config_drive'])
            self.assertIsNone(row['reservation_id'])
            self.assertIsNone(row['network_info'])
        # Active since it was created; the one still building never ran.
        self.assertEqual('2026-01-02 03:04:05',
                         str(rows[0]['launched_at']))
        self.assertIsNone(rows[1]['launched_at'])

    def test_servers_keep_their_rows_and_get_no_user_data_nor_tag(self):
        schema.db_sync(self.engine, SUPPORTED_INSTANCES)
        with self.engine.begin() as connection:
            connection.execute(sa.text(
                'INSERT INTO instances (id, uuid, display_name, host, '
                'vm_state, created_at, deleted) VALUES (:id, :uuid, :name, '
                ":host, :vm_state, '2026-01-02 03:04:05', 0)"),
                _LEGACY_INSTANCES)
        with self.engine.connect() as connection:
            before = [dict(row) for row in connection.execute(sa.text(
                'SELECT * FROM instances ORDER BY id')).mappings()]

        schema.db_sync(self.engine, USER_DATA_AND_TAGS)

        with self.engine.connect() as connection:
            after = [dict(row) for row in connection.execute(sa.text(
                'SELECT * FROM instances ORDER BY id')).mappings()]
            tags = connection.execute(sa.text(
                'SELECT count(*) FROM tags')).scalar()
        self.assertEqual([dict(row, user_data=None) for row in before],
                         after)
        self.assertEqual(0, tags)

    def test_user_data_takes_nova_s_largest_and_a_tag_is_kept_once(self):
        schema.db_sync(self.engine)
        # Within Nova's 65535 characters of base64.
        user_data = base64.b64encode(b'#!' * 24574).decode()
        uuid = _LEGACY_INSTANCES[0]['uuid']
        with self.engine.begin() as connection:
            connection.execute(sa.text(
                'INSERT INTO instances (uuid, user_data, deleted) '
                'VALUES (:uuid, :user_data, 0)'),
                {'uuid': uuid, 'user_data': user_data})
        self._insert_tag(uuid, 'a')
        with self.engine.connect() as connection:
            self.assertEqual(user_data, connection.execute(sa.text(
                'SELECT user_data FROM instances')).scalar())
        self.assertRaises(db_exc.DBDuplicateEntry, self._insert_tag, uuid, 'a')
        if self.engine.dialect.name == 'mysql':
            # Nova's column type, whatever the character set.
            column, = [column for column in sa.inspect(
                self.engine).get_columns('instances')
                if column['name'] == 'user_data']
            self.assertEqual('MEDIUMTEXT',
                             type(column['type']).__name__.upper())

    def _insert_tag(self, uuid, tag):
        with self.engine.begin() as connection:
            connection.execute(sa.text(
                'INSERT INTO tags (resource_id, tag) VALUES (:uuid, :tag)'),
                {'uuid': uuid, 'tag': tag})

    def test_forced_down_defaults_to_false_for_rows_written_later(self):
        schema.db_sync(self.engine)
        _insert_legacy_services(self.engine)
        self.assertEqual([False] * 4, [bool(row['forced_down'])
                                       for row in _services(self.engine)])

    def test_second_sync_changes_nothing(self):
        schema.db_sync(self.engine)
        before = sa.inspect(self.engine).get_columns('services')

        with sql_statements.recorded_statements(self.engine) as statements:
            schema.db_sync(self.engine)

        changes = [statement for statement in statements
                   if statement.lstrip().upper().startswith(
                       ('CREATE', 'ALTER', 'DROP', 'INSERT', 'UPDATE',
                        'DELETE'))]
        self.assertEqual([], changes)
        self.assertEqual(schema.head_revision(),
                         schema.db_version(self.engine))
        self.assertEqual(repr(before),
                         repr(sa.inspect(self.engine).get_columns('services')))


databases.backend_test_cases(MigrationsMixin, globals(),
                             databases.EMPTY_FIXTURES)


class ModelsMigrationsSyncMixin(test_migrations.ModelsMigrationsSync):
    """The models describe exactly the schema the migrations build."""

    def db_sync(self, engine):
        schema.db_sync(engine)

    def get_engine(self):
        return self.engine

    def get_metadata(self):
        return models.Base.metadata


databases.backend_test_cases(ModelsMigrationsSyncMixin, globals(),
                             databases.EMPTY_FIXTURES)
