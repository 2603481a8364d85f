"""Evacuation under faults, on SQLite, PostgreSQL and MariaDB: a
destination whose agent is dead, a source that comes back early, a
destination full when forced, a retried evacuation.

Each test is a hole an adversary found: it held no server on two hosts
only by luck, or overcommitted a host, or could not be retried. The
hypervisors are fake drivers that know what they run.
"""

import datetime

from oslo_db import exception as db_exc
from oslo_utils import timeutils
import sqlalchemy as sa

from nova_forcedown.cmd import compute as compute_cmd
from nova_forcedown.compute import agent as compute_agent
from nova_forcedown.compute.drivers import base as driver_base
from nova_forcedown.compute.drivers import fake as fake_driver
from nova_forcedown.compute import tasks as compute_tasks
from nova_forcedown import conf as nf_conf
from nova_forcedown.db import migrations as db_migrations
from nova_forcedown import exception
from nova_forcedown.objects import instance as instance_obj
from nova_forcedown.objects import instance_fault
from nova_forcedown.objects import service as service_obj
from tests.fixtures import databases
from tests.fixtures import db_rows
from tests.functional.db import test_evacuation
from tests.unit import test_heartbeat

RUNNING = fake_driver.POWER_STATE_RUNNING


class _Host:
    """A simulated host: its hypervisor, and its agent when started."""

    def __init__(self, test, name):
        self.name = name
        self.driver = fake_driver.FakeDriver(test_evacuation._agent_conf())
        self._test = test

    def boot(self, uuids):
        """The host runs these servers (its agent adopted them)."""
        self.driver.adopt(self.name, [
            instance_obj.get_record(self._test.context, uuid)
            for uuid in uuids])

    def restart_agent(self):
        """The agent's start-up clean-up, as a restarted agent does it."""
        compute_agent.Agent(test_evacuation._agent_conf(),
                            self.driver).clean_up_evacuated([self.name])

    def run_tasks(self):
        runner = compute_tasks.TaskRunner(
            self._test.context, self.driver, [self.name], self._test.conf,
            test_heartbeat.FakeClock())
        return runner.run_pending()

    def runs(self, uuid):
        return uuid in self.driver.guests(self.name)


class _EvacuationFaultsMixin(test_evacuation._EvacuationBase):

    def setUp(self):
        super().setUp()
        self.hosts = {name: _Host(self, name)
                      for name in ('src', 'dst-big', 'dst-small')}
        self.hosts['src'].boot(self.uuids)

    def force_up(self, host):
        return service_obj.Service.update_compute(
            self.admin, {'forced_down': False}, host=host)

    def dies(self, host):
        """The host's agent stops heartbeating, long enough to be down."""
        self.last_heard(host, self.conf.service_down_time + 10)

    def alive(self, host):
        self.last_heard(host, 0)

    def last_heard(self, host, seconds_ago):
        service = service_obj.Service.get_by_host_and_binary(
            self.context, host, 'nova-compute')
        service.last_seen_up = timeutils.utcnow() - datetime.timedelta(
            seconds=seconds_ago)
        service.save()

    def copies(self, uuid):
        return [name for name, host in sorted(self.hosts.items())
                if host.runs(uuid)]

    def migrations_of(self, uuid):
        return [(m.source_compute, m.dest_compute, m.status) for m in
                reversed(db_migrations.migrations_get_all(
                    self.context, exact={'instance_uuid': uuid}))]

    # ------------------------------------------------ the early force-up

    def test_no_force_up_while_the_destination_has_not_rebuilt(self):
        self.evacuate(self.uuids[0])
        self.evacuate(self.uuids[1])

        error = self.assertRaises(exception.ForceUpWithEvacuationsInProgress,
                                  self.force_up, 'src')

        self.assertIn('2 evacuation migration(s) away from it are not yet '
                      '`completed` (2 accepted)', str(error))
        self.assertTrue(service_obj.Service.get_by_host_and_binary(
            self.context, 'src', 'nova-compute').forced_down)

    def test_a_source_back_before_the_destination_leaves_one_copy(self):
        uuid = self.uuids[0]
        self.evacuate(uuid)
        # dst-big's agent is dead, yet looks up: the migration waits.
        self.hosts['src'].restart_agent()

        self.assertEqual([], self.copies(uuid))
        self.force_up('src')
        self.assertEqual(1, self.hosts['dst-big'].run_tasks())

        self.assertEqual(['dst-big'], self.copies(uuid))
        self.assertEqual([('src', 'dst-big', 'completed')],
                         self.migrations_of(uuid))
        server = instance_obj.get_record(self.context, uuid)
        self.assertEqual(('dst-big', 'active', None),
                         (server.host, server.vm_state, server.task_state))

    def test_the_source_cleans_up_only_what_left_it(self):
        self.evacuate(self.uuids[0])
        self.hosts['src'].restart_agent()

        self.assertEqual(self.uuids[1:],
                         [uuid for uuid in self.uuids
                          if self.hosts['src'].runs(uuid)])

    def test_a_source_with_done_evacuations_answers_as_nova(self):
        self.evacuate(self.uuids[0])
        self.hosts['dst-big'].run_tasks()

        self.assertRaises(exception.ForceUpWithEvacuationsLeft,
                          self.force_up, 'src')
        self.hosts['src'].restart_agent()
        self.force_up('src')

        self.assertEqual(['dst-big'], self.copies(self.uuids[0]))

    # ------------------------------------------ a destination that dies

    def test_a_destination_dead_mid_rebuild_resumes_at_restart(self):
        uuid = self.uuids[0]
        self.evacuate(uuid)
        [migration] = db_migrations.migrations_get_all(self.context)
        # It had begun: the migration is pre-migrating when it dies.
        db_migrations.migration_set_status(self.context, migration.id,
                                           'pre-migrating')

        self.assertEqual(1, self.hosts['dst-big'].run_tasks())

        self.assertEqual([('src', 'dst-big', 'done')],
                         self.migrations_of(uuid))
        self.assertEqual(['dst-big', 'src'], self.copies(uuid))
        self.hosts['src'].restart_agent()
        self.assertEqual(['dst-big'], self.copies(uuid))

    def test_a_rebuild_that_cannot_end_whole_ends_at_the_next_look(self):
        uuid = self.uuids[0]
        self.evacuate(uuid)
        self.cut_once('UPDATE migrations', after=1)

        self.assertRaises(exception.DatabaseUnavailable,
                          self.hosts['dst-big'].run_tasks)

        # The database went away as the rebuild ended: nothing of the end
        # was written, not the server without its migration.
        server = instance_obj.get_record(self.context, uuid)
        self.assertEqual(('dst-big', 'rebuilding'),
                         (server.host, server.task_state))
        self.assertEqual([('src', 'dst-big', 'pre-migrating')],
                         self.migrations_of(uuid))
        self.assertEqual(1, self.hosts['dst-big'].run_tasks())
        self.assertEqual([('src', 'dst-big', 'done')],
                         self.migrations_of(uuid))
        server = instance_obj.get_record(self.context, uuid)
        self.assertEqual(('active', None), (server.vm_state,
                                            server.task_state))

    def cut_once(self, statement, after=0):
        """The database fails the statement starting so, past ``after``."""
        seen = []

        def cut(conn, cursor, text, *args):
            if text.startswith(statement):
                seen.append(text)
                if len(seen) == after + 1:
                    raise db_exc.DBConnectionError('the database went away')

        sa.event.listen(self.engine, 'before_cursor_execute', cut)
        self.addCleanup(sa.event.remove, self.engine, 'before_cursor_execute',
                        cut)

    # ----------------------------------------------------- the retry

    def test_a_stuck_evacuation_is_retried_once_its_destination_is_down(self):
        uuid = self.uuids[0]
        self.evacuate(uuid)
        self.dies('dst-big')

        migration = self.evacuate(uuid)

        self.assertEqual(('src', 'dst-small', 'accepted'),
                         (migration.source_compute, migration.dest_compute,
                          migration.status))
        self.assertEqual([('src', 'dst-big', 'failed'),
                          ('src', 'dst-small', 'accepted')],
                         self.migrations_of(uuid))
        server = instance_obj.get_record(self.context, uuid)
        self.assertEqual(('dst-small', 'rebuilding'),
                         (server.host, server.task_state))
        # The source still may run it: no force-up yet.
        self.assertRaises(exception.ForceUpWithEvacuationsInProgress,
                          self.force_up, 'src')

    def test_a_retry_releases_the_first_claim(self):
        for uuid in self.uuids:
            self.evacuate(uuid)
        # dst-big and dst-small are full; one of dst-big's goes elsewhere.
        moved = next(uuid for uuid in self.uuids
                     if self.hosts_of([uuid]) == ['dst-big'])
        self.dies('dst-big')
        service = db_rows.create_service(
            self.context, host='dst-new', last_seen_up=timeutils.utcnow())
        db_rows.create_compute_node(
            self.context, service, 'dst-new.node',
            memory_mb=test_evacuation.GIB, vcpus=64, local_gb=1000)
        self.assertEqual('dst-new', self.evacuate(moved).dest_compute)
        self.alive('dst-big')
        seventh = db_rows.create_instance(
            self.context, 'src', flavor=test_evacuation.SERVER_FLAVOR,
            launched_at=timeutils.utcnow(), availability_zone='nova').uuid

        self.assertEqual('dst-big', self.evacuate(seventh).dest_compute)

    def test_a_superseded_rebuild_leaves_no_copy(self):
        uuid = self.uuids[0]
        self.evacuate(uuid)
        seen = instance_obj.get_record(self.context, uuid)
        self.dies('dst-big')
        self.evacuate(uuid)

        # dst-big's agent was only slow: it rebuilds what it had read.
        runner = compute_tasks.TaskRunner(
            self.context, self.hosts['dst-big'].driver, ['dst-big'],
            self.conf, test_heartbeat.FakeClock())
        runner.rebuild(seen)
        self.hosts['dst-small'].run_tasks()
        self.hosts['src'].restart_agent()

        self.assertEqual(['dst-small'], self.copies(uuid))
        server = instance_obj.get_record(self.context, uuid)
        self.assertEqual(('dst-small', 'active', None),
                         (server.host, server.vm_state, server.task_state))
        self.assertEqual([('src', 'dst-big', 'failed'),
                          ('src', 'dst-small', 'completed')],
                         self.migrations_of(uuid))

    def test_a_retry_while_the_destination_is_up_leaves_one_copy(self):
        # dst-big's agent died before its rebuild and dst-big still looks
        # up: the retry is judged on src (down), as Nova judges it.
        uuid = self.uuids[0]
        self.evacuate(uuid)
        self.evacuate(uuid, host='dst-small')
        # dst-big's agent comes back: what was superseded is not built.
        self.hosts['dst-big'].run_tasks()
        self.hosts['dst-small'].run_tasks()
        self.hosts['src'].restart_agent()

        self.assertEqual(['dst-small'], self.copies(uuid))
        self.assertEqual([('src', 'dst-big', 'failed'),
                          ('src', 'dst-small', 'completed')],
                         self.migrations_of(uuid))

    def test_a_retry_once_the_destination_started_is_refused(self):
        uuid = self.uuids[0]
        self.evacuate(uuid)
        self.hosts['dst-big'].run_tasks()
        self.hosts['dst-big'].driver.destroy('dst-big', uuid)

        self.assertRaises(exception.ComputeServiceInUse, self.evacuate, uuid)

        self.assertEqual([('src', 'dst-big', 'done')],
                         self.migrations_of(uuid))

    # ----------------------------------------------- forced destinations

    def test_a_forced_destination_is_never_overcommitted(self):
        migrations = [self.evacuate(uuid, host='dst-small', force=True)
                      for uuid in self.uuids[:3]]

        self.assertEqual(['accepted', 'accepted', 'error'],
                         [migration.status for migration in migrations])
        server = instance_obj.get_record(self.context,
                                         self.uuids[2])
        # Nova's forced claim failure: the server keeps its state.
        self.assertEqual(('src', 'active', None),
                         (server.host, server.vm_state, server.task_state))
        self.assertEqual(['dst-small', 'dst-small', 'src'],
                         self.hosts_of(self.uuids[:3]))

    def test_force_still_skips_the_filters(self):
        migration = self.evacuate(self.uuids[0], host='dst-disabled',
                                  force=True)

        self.assertEqual(('dst-disabled', 'accepted'),
                         (migration.dest_compute, migration.status))


databases.backend_test_cases(_EvacuationFaultsMixin, globals())


class _FailingRebuild(fake_driver.FakeDriver):
    """A hypervisor that cannot build the evacuated server."""

    def rebuild(self, instance, stopped=False):
        raise driver_base.DriverError('no image')


class _RestartedAgentMixin(test_evacuation._EvacuationBase):
    """An agent of its own host, fi-1, started and started again."""

    def start_agent(self):
        """The hypervisor of a freshly started agent of fi-1."""
        conf = nf_conf.make_conf(
            ['--driver', 'fake', '--hosts', '1', '--host-prefix', 'fi-',
             '--instances', '2'], default_config_files=[],
            default_config_dirs=[], register_cli=compute_cmd.CLI_OPTS)
        driver = fake_driver.FakeDriver(conf)
        compute_agent.Agent(conf, driver).register()
        return driver

    def test_a_server_whose_rebuild_failed_is_not_made_again(self):
        self.start_agent()
        service_obj.Service.update_compute(self.admin, {'forced_down': True},
                                           host='fi-1')
        first, second = sorted(server.uuid for server in
                               instance_obj.get_by_host(
                                   self.context, 'fi-1'))
        self.evacuate(first, host='dst-big')
        compute_tasks.TaskRunner(
            self.context, _FailingRebuild(test_evacuation._agent_conf()),
            ['dst-big'], self.conf, test_heartbeat.FakeClock()).run_pending()

        driver = self.start_agent()

        self.assertEqual([second], [server.uuid for server in
                                    instance_obj.get_by_host(
                                        self.context, 'fi-1')])
        self.assertEqual([second], list(driver.guests('fi-1')))
        server = instance_obj.get_record(self.context, first)
        self.assertEqual(('dst-big', 'error'), (server.host, server.vm_state))
        fault = instance_fault.latest_of(self.context, [first])[first]
        self.assertEqual((500, 'no image', 'dst-big'),
                         (fault.code, fault.message, fault.host))
        self.assertIn('DriverError: no image', fault.details)


databases.backend_test_cases(_RestartedAgentMixin, globals())
