"""Evacuation on SQLite, PostgreSQL and MariaDB: where servers go, that
no host is overcommitted, what the destination and the source do.

A source host, forced down, with six servers of 1 GiB; two destinations
with room for four and for two of them; a third destination is disabled,
a fourth forced down, a fifth in another zone.
"""

import threading

from oslo_utils import timeutils

from nova_forcedown.cmd import compute as compute_cmd
from nova_forcedown.compute import agent as compute_agent
from nova_forcedown.compute.drivers import fake as fake_driver
from nova_forcedown.compute import tasks as compute_tasks
from nova_forcedown import conf as nf_conf
from nova_forcedown import context as nf_context
from nova_forcedown.db import migrations as db_migrations
from nova_forcedown.db import models
from nova_forcedown.objects import aggregate as aggregate_obj
from nova_forcedown import exception
from nova_forcedown.objects import evacuation
from nova_forcedown.objects import host_tasks
from nova_forcedown.objects import instance as instance_obj
from nova_forcedown.objects import instance_action
from nova_forcedown.objects import service as service_obj
from nova_forcedown.scheduler import host_selection
from nova_forcedown.servicegroup import api as servicegroup_api
from tests.fixtures import configuration
from tests.fixtures import databases
from tests.fixtures import db_rows
from tests.unit import test_heartbeat

GIB = 1024
SERVER_FLAVOR = {'flavorid': 'g1', 'name': 'g1', 'memory_mb': GIB,
                 'vcpus': 1, 'root_gb': 1, 'ephemeral_gb': 0, 'swap': 0,
                 'extra_specs': {}}


class _EvacuationBase:

    def setUp(self):
        super().setUp()
        self.conf = self.useFixture(configuration.ConfFixture()).conf
        self.servicegroup = servicegroup_api.API(self.conf)
        now = timeutils.utcnow()
        for host, memory, fields in (
                ('src', 8 * GIB, {'forced_down': True}),
                ('dst-big', 4 * GIB, {}), ('dst-small', 2 * GIB, {}),
                ('dst-disabled', 64 * GIB, {'disabled': True}),
                ('dst-down', 64 * GIB, {'forced_down': True}),
                ('dst-elsewhere', 64 * GIB, {})):
            service = db_rows.create_service(
                self.context, host=host, last_seen_up=now, **fields)
            db_rows.create_compute_node(
                self.context, service, host + '.node', memory_mb=memory,
                vcpus=64, local_gb=1000)
        aggregate = aggregate_obj.create(
            self.context, 'elsewhere', availability_zone='az2')
        aggregate_obj.add_host_to(self.context, aggregate.id,
                                  'dst-elsewhere')
        for host in ('dst-big', 'dst-small'):
            db_rows.create_instance(self.context, host, name='small',
                                    flavor=dict(SERVER_FLAVOR,
                                                memory_mb=0))
        self.uuids = [db_rows.create_instance(
            self.context, 'src', name='s%d' % i, flavor=SERVER_FLAVOR,
            launched_at=now, availability_zone='nova').uuid
            for i in range(6)]
        self.admin = nf_context.RequestContext(
            user_id='operator', project_id='ops', is_admin=True,
            roles=['admin'])

    def evacuate(self, uuid, host=None, force=False, **kwargs):
        server = instance_obj.get_record(self.context, uuid)
        plan = host_selection.evacuation_plan(
            self.admin, self.conf, self.servicegroup, server, host, force)
        return evacuation.evacuate(self.admin, plan, server, host=host,
                                   force=force, **kwargs)

    def hosts_of(self, uuids):
        return [instance_obj.get_record(self.context, uuid).host
                for uuid in uuids]


class _EvacuationMixin(_EvacuationBase):

    def test_servers_fill_the_valid_hosts_and_no_more(self):
        migrations = [self.evacuate(uuid) for uuid in self.uuids]

        placed = self.hosts_of(self.uuids)
        self.assertEqual(4, placed.count('dst-big'))
        self.assertEqual(2, placed.count('dst-small'))
        self.assertEqual({'accepted'}, {m.status for m in migrations})

    def test_a_host_whose_driver_runs_no_server_is_never_a_destination(self):
        # The most room of all, up and enabled: a local driver's machine.
        service = db_rows.create_service(
            self.context, host='dst-local', last_seen_up=timeutils.utcnow())
        db_rows.create_compute_node(
            self.context, service, 'dst-local.node', memory_mb=512 * GIB,
            vcpus=64, local_gb=1000, supported_instances=[])

        self.evacuate(self.uuids[0])
        forced = self.evacuate(self.uuids[1], host='dst-local', force=True)
        asked = self.evacuate(self.uuids[2], host='dst-local')

        self.assertEqual('dst-big', self.hosts_of(self.uuids[:1])[0])
        self.assertEqual(['error', 'error'], [forced.status, asked.status])
        self.assertEqual(['src', 'src'], self.hosts_of(self.uuids[1:3]))

    def test_a_node_that_has_not_said_what_it_runs_may_be_one(self):
        # Its agent is older than supported_instances: taken as able.
        service = db_rows.create_service(
            self.context, host='dst-old', last_seen_up=timeutils.utcnow())
        db_rows.create_compute_node(
            self.context, service, 'dst-old.node', memory_mb=512 * GIB,
            vcpus=64, local_gb=1000, supported_instances=None)

        self.evacuate(self.uuids[0])

        self.assertEqual(['dst-old'], self.hosts_of(self.uuids[:1]))

    def test_a_seventh_server_finds_no_host(self):
        for uuid in self.uuids:
            self.evacuate(uuid)
        extra = db_rows.create_instance(
            self.context, 'src', flavor=SERVER_FLAVOR,
            launched_at=timeutils.utcnow(), availability_zone='nova').uuid

        migration = self.evacuate(extra)

        self.assertEqual('error', migration.status)
        server = instance_obj.get_record(self.context, extra)
        self.assertEqual(('src', 'error', None),
                         (server.host, server.vm_state, server.task_state))

    def test_the_destination_rebuilds_and_the_source_cleans_up(self):
        self.evacuate(self.uuids[0])
        driver = fake_driver.FakeDriver(_agent_conf())
        runner = compute_tasks.TaskRunner(self.context, driver,
                                          ['dst-big', 'dst-small'],
                                          self.conf,
                                          test_heartbeat.FakeClock())

        self.assertEqual(1, runner.run_pending())

        server = instance_obj.get_record(self.context,
                                         self.uuids[0])
        self.assertEqual(('dst-big', 'active', None, 1),
                         (server.host, server.vm_state, server.task_state,
                          server.power_state))
        [migration] = db_migrations.migrations_get_all(self.context)
        self.assertEqual('done', migration.status)
        [action] = instance_action.get_all(self.context, self.uuids[0])
        self.assertEqual([('compute_rebuild_instance', 'Success')],
                         [(event.event, event.result) for event in
                          instance_action.events(self.context, action.id)])

        source = fake_driver.FakeDriver(_agent_conf())
        agent = compute_agent.Agent(_agent_conf(), source)
        agent.clean_up_evacuated(['src'])

        self.assertEqual([self.uuids[0]], source.destroyed)
        [migration] = db_migrations.migrations_get_all(self.context)
        self.assertEqual('completed', migration.status)

    def test_a_restarted_fake_agent_never_makes_a_server_again(self):
        conf = _agent_conf('--hosts', '2', '--instances', '3')
        compute_agent.Agent(conf, fake_driver.FakeDriver(conf)).register()
        source = service_obj.Service.get_by_host_and_binary(
            self.context, 'fake-compute-1', service_obj.COMPUTE_BINARY)
        source.forced_down = True
        source.save()
        moved = self.server_named('fake-compute-1-server-1')
        self.evacuate(moved.uuid, host='fake-compute-2')
        restarted = []
        for purged in (False, True):
            if purged:
                # Its migration purged: the server is still known by name.
                with self.engine.begin() as connection:
                    connection.execute(models.Migration.__table__.delete())
            # Restarted, as a simulated host whose agent crashed.
            compute_agent.Agent(conf, fake_driver.FakeDriver(conf)).register()
            restarted.append(sorted(
                (server.display_name, server.host) for server in
                instance_obj.get_by_hosts(
                    self.context, ['fake-compute-1', 'fake-compute-2'])))

        expected = sorted(
            [('fake-compute-1-server-1', 'fake-compute-2')] +
            [('fake-compute-%d-server-%d' % (host, server),
              'fake-compute-%d' % host)
             for host in (1, 2) for server in (1, 2, 3)
             if (host, server) != (1, 1)])
        self.assertEqual([expected, expected], restarted)

    def server_named(self, name):
        [server] = [server for server in
                    instance_obj.get_by_hosts(
                        self.context, ['fake-compute-1'])
                    if server.display_name == name]
        return server

    def test_from_2_95_the_server_ends_stopped(self):
        self.evacuate(self.uuids[0], stop_after=True)
        runner = compute_tasks.TaskRunner(
            self.context, fake_driver.FakeDriver(_agent_conf()),
            ['dst-big', 'dst-small'], self.conf, test_heartbeat.FakeClock())
        runner.run_pending()
        server = instance_obj.get_record(self.context,
                                         self.uuids[0])
        self.assertEqual(('stopped', 4), (server.vm_state,
                                          server.power_state))

    def test_a_zone_keeps_its_servers(self):
        elsewhere = db_rows.create_instance(
            self.context, 'src', flavor=SERVER_FLAVOR,
            launched_at=timeutils.utcnow(), availability_zone='az2').uuid
        self.evacuate(elsewhere)
        self.assertEqual(['dst-elsewhere'], self.hosts_of([elsewhere]))

    def test_a_retry_is_judged_on_the_source_while_no_rebuild_started(self):
        # dst-big's agent died before it started the rebuild, and dst-big
        # still looks up: as in Nova, the source (down) is what counts.
        first = self.evacuate(self.uuids[0])
        stale = instance_obj.get_record(self.context, self.uuids[0])
        self.assertEqual('dst-big', stale.host)

        second = self.evacuate(self.uuids[0], host='dst-small')

        statuses = {migration.id: migration.status for migration in
                    db_migrations.migrations_get_all(self.context)}
        self.assertEqual(['failed', 'accepted'],
                         [statuses[first.id], statuses[second.id]])
        self.assertEqual('src', second.source_compute)
        self.assertEqual(['dst-small'], self.hosts_of(self.uuids[:1]))
        # dst-big's agent, back with what it read before, builds nothing.
        self.assertTrue(host_tasks.start(self.context, stale).superseded)

    def test_a_retry_with_nowhere_to_go_leaves_the_first_standing(self):
        first = self.evacuate(self.uuids[0])

        self.assertRaises(exception.ComputeServiceInUse, self.evacuate,
                          self.uuids[0], host='dst-disabled')

        self.assertEqual([(first.id, 'accepted')], [
            (migration.id, migration.status) for migration in
            db_migrations.migrations_get_all(self.context)])
        self.assertEqual(['dst-big'], self.hosts_of(self.uuids[:1]))

    def test_a_retry_after_the_rebuild_started_waits_for_its_host(self):
        self.evacuate(self.uuids[0])
        started = host_tasks.start(
            self.context, instance_obj.get_record(self.context,
                                                  self.uuids[0]))
        self.assertFalse(started.superseded)

        self.assertRaises(exception.ComputeServiceInUse, self.evacuate,
                          self.uuids[0], host='dst-small')

        self.assertEqual(['pre-migrating'], [
            migration.status for migration in
            db_migrations.migrations_get_all(self.context)])
        self.assertEqual(['dst-big'], self.hosts_of(self.uuids[:1]))

    def test_a_reserved_host_is_a_plan_only_up_and_with_room(self):
        server = instance_obj.get_record(self.context, self.uuids[0])

        def plan(host):
            return host_selection.reserved_host_plan(
                self.admin, self.servicegroup, server, host)

        # Disabled, as a reserved host waits: still a destination.
        disabled = plan('dst-disabled')
        self.assertEqual(
            (False, ['dst-disabled.node']),
            (disabled.source_up,
             [capacity.node for capacity in disabled.choices]))
        self.assertEqual([None, None, None], [
            plan(host) for host in ('dst-down', 'src', 'nowhere')])
        # Full once two other servers went there.
        self.assertIsNotNone(plan('dst-small'))
        for uuid in self.uuids[1:3]:
            self.evacuate(uuid, host='dst-small', force=True)
        self.assertIsNone(plan('dst-small'))


class _ConcurrentEvacuationsMixin(_EvacuationBase):
    """On database servers (the test's SQLite is one shared connection)."""

    def test_concurrent_evacuations_never_overcommit(self):
        barrier = threading.Barrier(len(self.uuids))
        errors = []

        def evacuate(uuid):
            barrier.wait()
            try:
                self.evacuate(uuid)
            except Exception as exc:  # noqa: the test reports them
                errors.append(repr(exc))

        threads = [threading.Thread(target=evacuate, args=(uuid,))
                   for uuid in self.uuids]
        for thread in threads:
            thread.start()
        for thread in threads:
            thread.join(60)

        self.assertEqual([], errors)
        placed = self.hosts_of(self.uuids)
        self.assertEqual((4, 2), (placed.count('dst-big'),
                                  placed.count('dst-small')))


def _agent_conf(*args):
    return nf_conf.make_conf(['--driver', 'fake', '--hosts', '1', *args],
                             default_config_files=[],
                             default_config_dirs=[],
                             register_cli=compute_cmd.CLI_OPTS)


databases.backend_test_cases(_EvacuationMixin, globals())
databases.backend_test_cases(
    _ConcurrentEvacuationsMixin, globals(),
    backend_fixtures=databases.MIGRATED_FIXTURES[1:])
