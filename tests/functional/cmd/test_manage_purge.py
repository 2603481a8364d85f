"""``nova-forcedown-manage db purge`` on SQLite, PostgreSQL and MariaDB.

A retry storm is made as clients make it, through the real WSGI app:
evacuations of a server whose host is down and that no host has room
for, each an error migration, an instance action and a service-history
entry; meanwhile one evacuation is under way (the destination's agent
has yet to rebuild) and one is done (its source has not come back). The
command then runs as an operator runs it, a process of its own against
the database, which the tests read with plain SQL.
"""

import datetime
import os
import sys

import fixtures
from oslo_db.sqlalchemy import enginefacade
from oslo_db.sqlalchemy import test_fixtures
from oslo_utils import timeutils
from oslo_utils import uuidutils
from oslotest import base
import sqlalchemy as sa
import webob

from nova_forcedown.api import deploy
from nova_forcedown.cmd import compute as compute_cmd
from nova_forcedown.compute.drivers import fake as fake_driver
from nova_forcedown.compute import tasks as compute_tasks
from nova_forcedown import conf as nf_conf
from nova_forcedown import context as nf_context
from nova_forcedown.db import engine as db_engine
from nova_forcedown.db import models
from nova_forcedown.db import schema
from tests.fixtures import commands
from tests.fixtures import configuration
from tests.fixtures import db_rows
from tests.fixtures import processes
from tests.fixtures import server_database
from tests.functional.cmd import test_manage
from tests.unit import test_heartbeat

ADMIN_TOKEN = 'admin:6f70656e737461636b'
FLAVOR = dict(db_rows.INSTANCE_FLAVOR, memory_mb=512)
STORM = 30
LATE_STORM = 5

_MIGRATIONS = models.Migration.__table__
_ACTIONS = models.InstanceAction.__table__
_EVENTS = models.InstanceActionEvent.__table__
_HISTORY = models.ServiceHistory.__table__
_FAULTS = models.InstanceFault.__table__
_INSTANCES = models.Instance.__table__
_NODES = models.ComputeNode.__table__
_SERVICES = models.Service.__table__


class PurgeDatabase(fixtures.Fixture):
    """A migrated database that this process and a command both reach.

    This process uses it through the project's transaction context (the
    objects and the WSGI app write to it); ``manage()`` runs the command
    on it by URL from a configuration file.
    """

    def __init__(self, backend):
        super().__init__()
        self.backend = backend

    def setUp(self):
        # A skip from a fixture set up inside this one would come out
        # wrapped, as a failure: the server is checked first.
        if self.backend != 'sqlite':
            server_database.available(self.backend)
        super().setUp()

    def _setUp(self):
        self.directory = self.useFixture(fixtures.TempDir()).path
        if self.backend == 'sqlite':
            url = 'sqlite:///' + os.path.join(self.directory, 'nf.sqlite')
            engine = sa.create_engine(url)
            schema.db_sync(engine)
            engine.dispose()
        else:
            url = self.useFixture(
                server_database.ServerDatabase(self.backend)).url_text
        self.conf = self.useFixture(configuration.ConfFixture(
            database__connection=url, api__auth_strategy='noauth2')).conf
        manager = enginefacade.transaction_context()
        db_engine.configure(self.conf, manager=manager)
        self.useFixture(test_fixtures.ReplaceEngineFacadeFixture(
            db_engine.context_manager, manager))
        self.engine = manager.writer.get_engine()
        self.addCleanup(self.engine.dispose)
        self.config_file = processes.write_config(
            self.directory, '[database]\nconnection = %s\n' % url)

    def manage(self, *args):
        return processes.run(
            [sys.executable, '-m', 'nova_forcedown.cmd.manage',
             '--config-file', self.config_file, *args], timeout=60)

    def rows(self, table, *columns, **where):
        """(columns...) of the rows of ``table``, by id."""
        query = sa.select(*(table.c[name] for name in columns)).where(
            *(table.c[name] == value for name, value in where.items()))
        with self.engine.connect() as connection:
            return [tuple(row) for row in
                    connection.execute(query.order_by(table.c.id))]

    def count(self, table):
        with self.engine.connect() as connection:
            return connection.execute(
                sa.select(sa.func.count()).select_from(table)).scalar()

    def insert(self, table, **values):
        with self.engine.begin() as connection:
            return connection.execute(
                table.insert().values(**values)).inserted_primary_key[0]

    def set_all(self, table, **values):
        with self.engine.begin() as connection:
            connection.execute(table.update().values(**values))


def _cutoff(hours_ago):
    """(the time, the text an operator types for it) ``hours_ago``."""
    when = (timeutils.utcnow() - datetime.timedelta(hours=hours_ago)
            ).replace(microsecond=0)
    return when, when.isoformat(' ')


def _agent_conf():
    return nf_conf.make_conf(['--driver', 'fake', '--hosts', '1'],
                             default_config_files=[],
                             default_config_dirs=[],
                             register_cli=compute_cmd.CLI_OPTS)


class _PurgeMixin:
    BACKEND = None

    def setUp(self):
        super().setUp()
        self.database = self.useFixture(PurgeDatabase(self.BACKEND))
        self.context = nf_context.get_admin_context()

    def purge(self, *args, returncode=0):
        result = self.database.manage('db', 'purge', *args)
        self.assertEqual(returncode, result.returncode, result.stderr)
        self.assertEqual('', result.stderr)
        return result.stdout.strip().splitlines()

    def table_of(self, lines):
        return {row['Table']: int(row.get('Rows Deleted') or
                                  row['Rows To Delete'])
                for row in commands.parse_table('\n'.join(lines))}


class _RetryStormMixin(_PurgeMixin):

    def setUp(self):
        super().setUp()
        conf = self.database.conf
        self.app = deploy.load_app(conf)
        now = timeutils.utcnow()
        for host, memory, fields in (('failed', 8192, {'forced_down': True}),
                                     ('dst', 1024, {})):
            service = db_rows.create_service(
                self.context, host=host, last_seen_up=now, **fields)
            db_rows.create_compute_node(self.context, service,
                                        host + '.node', vcpus=64,
                                        memory_mb=memory, local_gb=1000)
        self.servers = {
            name: db_rows.create_instance(
                self.context, 'failed', name=name, flavor=FLAVOR,
                launched_at=now, availability_zone='nova').uuid
            for name in ('landed', 'moving', 'stormed')}
        self.runner = compute_tasks.TaskRunner(
            self.context, fake_driver.FakeDriver(_agent_conf()), ['dst'],
            conf, test_heartbeat.FakeClock())

    def request(self, method, path, body, version):
        request = webob.Request.blank('/v2.1' + path, method=method, headers={
            'X-Auth-Token': ADMIN_TOKEN,
            'OpenStack-API-Version': 'compute %s' % version})
        request.json_body = body
        return request.get_response(self.app)

    def evacuate(self, name):
        response = self.request('POST',
                                '/servers/%s/action' % self.servers[name],
                                {'evacuate': {}}, '2.53')
        self.assertEqual(200, response.status_int, response.body)

    def storm(self):
        """A day ago: 'landed' rebuilt, 'moving' accepted, then the storm.

        'stormed' is retried STORM times, dst being full; LATE_STORM more
        retries come now.
        """
        self.evacuate('landed')
        self.assertEqual(1, self.runner.run_pending())
        self.evacuate('moving')
        for _ in range(STORM):
            self.evacuate('stormed')
        # As if all that had happened yesterday.
        yesterday = timeutils.utcnow() - datetime.timedelta(days=1)
        for table in (_MIGRATIONS, _ACTIONS, _EVENTS, _HISTORY):
            self.database.set_all(table, created_at=yesterday,
                                  updated_at=yesterday)
        for _ in range(LATE_STORM):
            self.evacuate('stormed')

    def migrations(self):
        names = {uuid: name for name, uuid in self.servers.items()}
        return [(names[uuid], status) for uuid, status in
                self.database.rows(_MIGRATIONS, 'instance_uuid', 'status')]

    def test_the_storm_goes_and_what_agents_need_stays(self):
        self.storm()
        self.assertEqual(
            [('landed', 'done'), ('moving', 'accepted')] +
            [('stormed', 'error')] * (STORM + LATE_STORM), self.migrations())
        expected = {'migrations': STORM, 'instance_actions': STORM,
                    'instance_actions_events': 0,
                    'service_history': STORM + 2, 'instance_faults': 0,
                    'instances': 0, 'tags': 0,
                    'compute_nodes': 0, 'services': 0}
        cutoff, text = _cutoff(hours_ago=1)

        dry_run = self.purge('--before', text, '--dry-run')

        self.assertEqual(expected, self.table_of(dry_run))
        self.assertEqual('Would delete %d row(s) older than %s UTC; nothing '
                         'was deleted (--dry-run).' % (3 * STORM + 2, text),
                         dry_run[-1])
        self.assertEqual(STORM + LATE_STORM + 2,
                         self.database.count(_MIGRATIONS))

        purged = self.purge('--before', text, '--verbose')

        self.assertEqual(expected, self.table_of(purged))
        self.assertEqual('Deleted %d row(s) older than %s UTC.'
                         % (3 * STORM + 2, text), purged[-1])
        self.assertEqual(
            [('landed', 'done'), ('moving', 'accepted')] +
            [('stormed', 'error')] * LATE_STORM, self.migrations())
        self.assertEqual(
            [(self.servers['landed'],), (self.servers['moving'],)] +
            [(self.servers['stormed'],)] * LATE_STORM,
            self.database.rows(_ACTIONS, 'instance_uuid'))
        self.assertEqual([('compute_rebuild_instance', 'Success')],
                         self.database.rows(_EVENTS, 'event', 'result'))
        history = self.database.rows(_HISTORY, 'event', 'created_at')
        self.assertEqual(['evacuate-failed'] * LATE_STORM,
                         [event for event, _ in history])
        self.assertTrue(all(when >= cutoff for _, when in history))

        self.assertEqual(['Nothing to purge older than %s UTC.' % text],
                         self.purge('--before', text, returncode=3))

    def test_what_stays_is_still_what_the_agents_and_the_guard_use(self):
        self.storm()
        self.purge('--all')

        # The force-up guard still sees the evacuations not completed (400,
        # Nova's words, for the done one; 409 where it counts the accepted
        # one too).
        response = self.request(
            'PUT', '/os-services/force-down',
            {'host': 'failed', 'binary': 'nova-compute',
             'forced_down': False}, '2.11')
        self.assertIn(response.status_int, (400, 409), response.body)
        self.assertIn(b'`completed`', response.body)
        self.assertEqual([(True,)], self.database.rows(
            _SERVICES, 'forced_down', host='failed'))
        # The destination's agent rebuilds the server still moving, as its
        # migration says, and records it on its action.
        self.assertEqual(1, self.runner.run_pending())
        self.assertEqual([('landed', 'done'), ('moving', 'done')],
                         self.migrations())
        [moving] = self.database.rows(_ACTIONS, 'id',
                                      instance_uuid=self.servers['moving'])
        self.assertEqual([('compute_rebuild_instance', 'Success')],
                         self.database.rows(_EVENTS, 'event', 'result',
                                            action_id=moving[0]))


class _SoftDeletedAndBatchesMixin(_PurgeMixin):
    """Rows written as other processes leave them, a day old or new."""

    def setUp(self):
        super().setUp()
        self.yesterday = timeutils.utcnow() - datetime.timedelta(days=1)
        self.now = timeutils.utcnow()
        self.services = {}
        for host in ('live', 'gone', 'just-gone'):
            service = db_rows.create_service(self.context, host=host)
            node = db_rows.create_compute_node(self.context, service,
                                               host + '.node')
            self.services[host] = (service.id, node.id)
        self.soft_delete(_SERVICES, self.services['gone'][0], self.yesterday)
        self.soft_delete(_NODES, self.services['gone'][1], self.yesterday)
        self.soft_delete(_SERVICES, self.services['just-gone'][0], self.now)
        self.soft_delete(_NODES, self.services['just-gone'][1], self.now)
        self.servers = {
            name: db_rows.create_instance(self.context, 'live',
                                          name=name).uuid
            for name in ('idle', 'busy', 'deleted', 'just-deleted')}
        self.set_server('busy', task_state='powering-off')
        self.set_server('deleted', deleted=self.server_id('deleted'),
                        deleted_at=self.yesterday)
        self.set_server('just-deleted',
                        deleted=self.server_id('just-deleted'),
                        deleted_at=self.now)

    def soft_delete(self, table, row_id, when):
        with self.database.engine.begin() as connection:
            connection.execute(table.update().where(table.c.id == row_id)
                               .values(deleted=row_id, deleted_at=when))

    def server_id(self, name):
        [(server_id,)] = self.database.rows(_INSTANCES, 'id',
                                            uuid=self.servers[name])
        return server_id

    def set_server(self, name, **values):
        with self.database.engine.begin() as connection:
            connection.execute(_INSTANCES.update().where(
                _INSTANCES.c.uuid == self.servers[name]).values(**values))

    def action(self, name, when, events=2):
        action_id = self.database.insert(
            _ACTIONS, action='stop', instance_uuid=self.servers[name],
            request_id='req-%s' % name, start_time=when, created_at=when,
            deleted=0)
        for _ in range(events):
            self.database.insert(
                _EVENTS, event='compute_stop_instance', action_id=action_id,
                start_time=when, finish_time=when, result='Success',
                host='live', created_at=when, updated_at=when, deleted=0)
        return action_id

    def migration(self, name, when, status='completed'):
        return self.database.insert(
            _MIGRATIONS, uuid=uuidutils.generate_uuid(),
            instance_uuid=self.servers[name], status=status,
            migration_type='evacuation', source_compute='gone',
            dest_compute='live', created_at=when, updated_at=when, deleted=0)

    def test_small_batches_purge_what_the_default_batch_would(self):
        for second in range(12):
            self.action('idle', self.yesterday + datetime.timedelta(
                seconds=second))
        busy = self.action('busy', self.yesterday, events=1)
        for _ in range(3):
            self.action('deleted', self.yesterday)
        new = self.action('idle', self.now)
        kept_migrations = []
        ended = ['completed', 'error', 'failed'] * 2 + ['error']
        for second, status in enumerate(ended):
            migration = self.migration('idle', self.yesterday +
                                       datetime.timedelta(seconds=second),
                                       status)
            if status == 'failed':
                # An agent reads it at its start: a copy may be left.
                kept_migrations.append(migration)
        kept_migrations += [
            self.migration('busy', self.yesterday),
            self.migration('just-deleted', self.yesterday,
                           status='pre-migrating'),
            self.migration('idle', self.now, status='error')]
        for when in [self.yesterday] * 9 + [self.now]:
            self.database.insert(_HISTORY, host='live', binary='nova-compute',
                                 event='disable', changes='[]',
                                 created_at=when)
        _, text = _cutoff(hours_ago=1)

        purged = self.purge('--before', text, '--max-rows', '5', '--verbose')

        self.assertEqual({'migrations': 5, 'instance_actions': 15,
                          'instance_actions_events': 30,
                          'service_history': 9, 'instance_faults': 0,
                          'instances': 1, 'tags': 0,
                          'compute_nodes': 1, 'services': 1},
                         self.table_of(purged))
        self.assertEqual('Deleted 62 row(s) older than %s UTC.' % text,
                         purged[-1])
        self.assertEqual([(busy,), (new,)],
                         self.database.rows(_ACTIONS, 'id'))
        # The busy server's old action keeps its event: its agent is to
        # add its own there.
        self.assertEqual([(busy,), (new,), (new,)],
                         self.database.rows(_EVENTS, 'action_id'))
        self.assertEqual([(row,) for row in kept_migrations],
                         self.database.rows(_MIGRATIONS, 'id'))
        self.assertEqual(1, self.database.count(_HISTORY))
        self.assertEqual(
            [('idle', 0), ('busy', 0),
             ('just-deleted', self.server_id('just-deleted'))],
            self.database.rows(_INSTANCES, 'display_name', 'deleted'))
        self.assertEqual([('live',), ('just-gone',)],
                         self.database.rows(_SERVICES, 'host'))
        self.assertEqual([('live.node',), ('just-gone.node',)],
                         self.database.rows(_NODES, 'hypervisor_hostname'))

    def fault(self, name, when, message):
        return self.database.insert(
            _FAULTS, instance_uuid=self.servers[name], code=500,
            message=message, host='live', created_at=when, deleted=0)

    def test_faults_go_by_age_but_the_one_a_live_server_shows(self):
        self.fault('idle', self.yesterday, 'first failure')
        shown = self.fault('idle', self.yesterday, 'second failure')
        self.fault('deleted', self.yesterday, 'failure of a deleted server')
        recent = self.fault('busy', self.now, 'a recent failure')
        self.fault('busy', self.yesterday - datetime.timedelta(hours=1),
                   'an older one')
        _, text = _cutoff(hours_ago=1)

        purged = self.purge('--before', text, '--dry-run')
        self.assertEqual(3, self.table_of(purged)['instance_faults'])
        self.purge('--before', text)

        # The idle server's newest fault stays, however old: its view
        # shows it while the server is in error.
        self.assertEqual(
            [(shown, 'second failure'), (recent, 'a recent failure')],
            self.database.rows(_FAULTS, 'id', 'message'))

    def test_all_spares_only_what_a_process_still_needs(self):
        busy = self.action('busy', self.now)
        self.action('idle', self.now)
        accepted = self.migration('deleted', self.now, status='accepted')
        self.migration('idle', self.now)

        purged = self.purge('--all')

        self.assertEqual(['Deleted 10 row(s).'], purged)
        self.assertEqual([(busy,)], self.database.rows(_ACTIONS, 'id'))
        self.assertEqual([(busy,), (busy,)],
                         self.database.rows(_EVENTS, 'action_id'))
        self.assertEqual([(accepted,)],
                         self.database.rows(_MIGRATIONS, 'id'))
        self.assertEqual([('idle',), ('busy',)],
                         self.database.rows(_INSTANCES, 'display_name'))
        self.assertEqual([('live',)], self.database.rows(_SERVICES, 'host'))


class TestRetryStormSqlite(_RetryStormMixin, base.BaseTestCase):
    BACKEND = 'sqlite'


class TestRetryStormPostgreSQL(_RetryStormMixin, base.BaseTestCase):
    BACKEND = 'postgresql'


class TestRetryStormMySQL(_RetryStormMixin, base.BaseTestCase):
    BACKEND = 'mysql'


class TestSoftDeletedAndBatchesSqlite(_SoftDeletedAndBatchesMixin,
                                      base.BaseTestCase):
    BACKEND = 'sqlite'


class TestSoftDeletedAndBatchesPostgreSQL(_SoftDeletedAndBatchesMixin,
                                          base.BaseTestCase):
    BACKEND = 'postgresql'


class TestSoftDeletedAndBatchesMySQL(_SoftDeletedAndBatchesMixin,
                                     base.BaseTestCase):
    BACKEND = 'mysql'


class TestPurgeRefusals(test_manage.ManageTestCase):
    """What a purge refuses, on one line and before it deletes anything."""

    def setUp(self):
        super().setUp()
        self._assert_success(self._manage('db', 'sync'),
                             'Database is at revision %s.'
                             % test_manage.HEAD)

    def test_without_before_or_all_exits_1(self):
        self._assert_one_line_failure(self._manage('db', 'purge'), 1,
                                      'either --before or --all')
        self._assert_one_line_failure(
            self._manage('db', 'purge', '--all', '--before', '2026-01-01'),
            1, '--before and --all exclude each other')

    def test_a_date_it_cannot_read_exits_2(self):
        for text, fragment in (('30 days ago', "date -u -d '30 days ago'"),
                               ('Tue Oct 20 14:00:00 CEST 2026',
                                'time zone is unknown'),
                               ('2999-01-01', 'is in the future')):
            self._assert_one_line_failure(
                self._manage('db', 'purge', '--before', text), 2,
                'invalid value for --before: ', fragment)

    def test_an_empty_database_exits_1(self):
        os.remove(self.database)
        self._assert_one_line_failure(
            self._manage('db', 'purge', '--all'), 1, 'empty database')
