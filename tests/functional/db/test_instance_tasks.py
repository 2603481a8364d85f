"""Stop and start, from the API's record to the host's result, on SQLite,
PostgreSQL and MariaDB.

The operations record the task and the action in one transaction; the
agent's task runner (driven here by the test, not by its thread) finds
the tasks of its hosts with one query, has the fake driver power the
server off or on, ends the task and records the event.
"""

import threading

from oslo_utils import timeutils

from nova_forcedown.cmd import compute as compute_cmd
from nova_forcedown.compute import agent as compute_agent
from nova_forcedown.compute.drivers import base as driver_base
from nova_forcedown.compute.drivers import fake as fake_driver
from nova_forcedown.compute import tasks as compute_tasks
from nova_forcedown import conf as nf_conf
from nova_forcedown import context as nf_context
from nova_forcedown import exception
from nova_forcedown.objects import instance as instance_obj
from nova_forcedown.objects import instance_action
from nova_forcedown.objects import instance_fault
from nova_forcedown.objects import instance_operations as operations
from tests.fixtures import databases
from tests.fixtures import db_rows
from tests.fixtures import sql_statements
from tests.unit import test_heartbeat

OWNER = 'owner-project'


class BrokenDriver(fake_driver.FakeDriver):
    """A fake driver whose hypervisor refuses to power anything off."""

    def power_off(self, instance):
        raise driver_base.DriverError('the hypervisor is not answering')


class _TasksBase:
    """Two fake hosts of two servers each; the runner works for host 1."""

    DRIVER = fake_driver.FakeDriver

    def setUp(self):
        super().setUp()
        self.conf = nf_conf.make_conf(
            ['--driver', 'fake', '--hosts', '2', '--instances', '2',
             '--project-id', OWNER],
            default_config_files=[], default_config_dirs=[],
            register_cli=compute_cmd.CLI_OPTS)
        self.addCleanup(self.conf.reset)
        self.driver = self.DRIVER(self.conf)
        agent = compute_agent.Agent(self.conf, self.driver)
        agent.register()
        self.runner = compute_tasks.TaskRunner(
            self.context, self.driver, ['fake-compute-1'], self.conf,
            test_heartbeat.FakeClock())
        servers = instance_obj.get_by_host(self.context,
                                           'fake-compute-1')
        self.uuid = servers[0].uuid
        self.other_host_uuid = instance_obj.get_by_host(
            self.context, 'fake-compute-2')[0].uuid
        self.asker = nf_context.RequestContext(
            user_id='operator', project_id='ops', is_admin=True,
            roles=['admin'])

    def _server(self, uuid=None):
        return instance_obj.get_record(self.context,
                                       uuid or self.uuid)

    def _states(self, uuid=None):
        server = self._server(uuid)
        return server.vm_state, server.task_state, server.power_state

    def _events(self, action):
        found = instance_action.latest(self.context, self.uuid, action)
        return found, instance_action.events(self.context, found.id)


class _InstanceTasksMixin(_TasksBase):

    def test_a_stop_is_carried_out_by_the_host(self):
        operations.stop(self.asker, self.uuid)
        self.assertEqual(('active', 'powering-off', 1), self._states())

        self.assertEqual(1, self.runner.run_pending())

        self.assertEqual(('stopped', None, 4), self._states())
        self.assertEqual(4, self.driver.power_states[self.uuid])
        action, events = self._events('stop')
        self.assertEqual((self.asker.request_id, 'operator', 'ops', None),
                         (action.request_id, action.user_id,
                          action.project_id, action.message))
        self.assertIsNotNone(action.finish_time)
        self.assertEqual([('compute_stop_instance', 'fake-compute-1',
                           'Success')],
                         [(event.event, event.host, event.result)
                          for event in events])
        self.assertEqual(0, self.runner.run_pending())

    def test_a_start_follows_a_stop(self):
        operations.stop(self.asker, self.uuid)
        self.runner.run_pending()
        operations.start(self.asker, self.uuid)
        self.assertEqual(('stopped', 'powering-on', 4), self._states())

        self.runner.run_pending()

        self.assertEqual(('active', None, 1), self._states())
        self.assertEqual('Success', self._events('start')[1][0].result)

    def test_another_hosts_task_waits_for_its_own_agent(self):
        operations.stop(self.asker, self.other_host_uuid)

        self.assertEqual(0, self.runner.run_pending())

        self.assertEqual(('active', 'powering-off', 1),
                         self._states(self.other_host_uuid))

    def test_one_statement_finds_the_tasks_of_any_number_of_hosts(self):
        many = compute_tasks.TaskRunner(
            self.context, self.driver,
            ['fake-compute-%d' % i for i in range(1, 2001)], self.conf,
            test_heartbeat.FakeClock())
        for runner in (self.runner, many):
            with sql_statements.recorded_statements(self.engine) as statements:
                self.assertEqual(0, runner.run_pending())
            self.assertEqual(1, len(statements), statements)

    def test_a_reset_meanwhile_wins_over_the_hosts_result(self):
        operations.stop(self.asker, self.uuid)
        pending = operations.pending_tasks(self.context, ['fake-compute-1'])
        operations.reset_state(self.asker, self.uuid, 'error')

        self.runner.carry_out(pending[0])

        self.assertEqual(('error', None, 1), self._states())

    def test_a_server_never_launched_cannot_stop(self):
        server = db_rows.create_instance(self.context, 'fake-compute-1',
                                         name='never-launched')
        error = self.assertRaises(exception.InstanceInvalidState,
                                  operations.stop, self.asker, server.uuid)
        self.assertEqual("Instance %s is in an invalid state for 'stop'"
                         % server.uuid, str(error))
        self.assertEqual([], instance_action.get_all(self.context,
                                                     server.uuid))

    def test_an_unknown_server_is_not_found(self):
        self.assertRaises(exception.InstanceNotFound, operations.stop,
                          self.asker, '9c6d7a5e-8f3b-4c2a-9e1d-0a1b2c3d4e5f')

    def test_another_projects_server_is_not_found_for_a_member(self):
        self.assertRaises(exception.InstanceNotFound, operations.lock,
                          self.asker, self.uuid, project_id='not-the-owner')
        self.assertIsNone(self._server().locked_by)

    def test_the_update_time_moves(self):
        before = timeutils.utcnow().replace(microsecond=0)
        operations.lock(self.asker, self.uuid, reason='fenced')
        server = self._server()
        self.assertEqual(('admin', 'fenced'),
                         (server.locked_by, server.locked_reason))
        self.assertGreaterEqual(server.updated_at, before)


class _ConcurrentStopsMixin(_TasksBase):
    """Concurrent requests on database servers.

    The test's SQLite is one in-memory connection shared by every thread:
    test_sqlite_concurrency tries this on a file instead.
    """

    def test_concurrent_stops_let_exactly_one_in(self):
        barrier = threading.Barrier(6)
        outcomes = []

        def stop():
            barrier.wait()
            try:
                operations.stop(self.asker, self.uuid)
                outcomes.append('accepted')
            except exception.InstanceInvalidState as exc:
                outcomes.append(str(exc))

        threads = [threading.Thread(target=stop) for _ in range(6)]
        for thread in threads:
            thread.start()
        for thread in threads:
            thread.join()

        self.assertEqual(1, outcomes.count('accepted'), outcomes)
        refused = ("Cannot 'stop' instance %s while it is in task_state "
                   "powering-off" % self.uuid)
        self.assertEqual([refused] * 5, [outcome for outcome in outcomes
                                         if outcome != 'accepted'])
        self.assertEqual(['stop'], [action.action for action in
                                    instance_action.get_all(self.context,
                                                            self.uuid)])


class _FailedTasksMixin(_TasksBase):

    DRIVER = BrokenDriver

    def test_a_failed_stop_is_an_error_event_and_no_task(self):
        operations.stop(self.asker, self.uuid)

        self.runner.run_pending()

        self.assertEqual(('active', None, 1), self._states())
        action, events = self._events('stop')
        self.assertEqual('Error', action.message)
        self.assertEqual('Error', events[0].result)
        self.assertIn('the hypervisor is not answering', events[0].traceback)
        # As in Nova, a fault too, shown only once the server is in error.
        fault = instance_fault.latest_of(self.context, [self.uuid])[self.uuid]
        self.assertEqual((500, 'the hypervisor is not answering'),
                         (fault.code, fault.message))
        self.assertEqual(events[0].traceback, fault.details)


databases.backend_test_cases(_InstanceTasksMixin, globals())
databases.backend_test_cases(_FailedTasksMixin, globals())
databases.backend_test_cases(
    _ConcurrentStopsMixin, globals(),
    backend_fixtures=databases.MIGRATED_FIXTURES[1:])
