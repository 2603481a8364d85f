"""Host-wide mark_shutdown and reset_state on SQLite, PostgreSQL and
MariaDB: every live server of the host in one transaction, or none.
"""

import threading

from oslo_db import exception as db_exc
import sqlalchemy as sa

from nova_forcedown import context as nf_context
from nova_forcedown.db import models
from nova_forcedown import exception
from nova_forcedown.objects import host_operations as operations
from nova_forcedown.objects import instance as instance_obj
from nova_forcedown.objects import instance_action
from nova_forcedown.objects import service as service_obj
from tests.fixtures import configuration
from tests.fixtures import databases
from tests.fixtures import db_rows


def _down(service):
    return False


class _HostsBase:
    """Servers of a forced-down host, and of another.

    compute1 (forced down) has three servers, one of them deleted;
    compute2 has one.
    """

    def setUp(self):
        super().setUp()
        db_rows.create_service(self.context, 'compute1',
                               forced_down=True)
        db_rows.create_service(self.context, 'compute2')
        self.running = db_rows.create_instance(
            self.context, 'compute1', 'running', power_state=1)
        self.stopping = db_rows.create_instance(
            self.context, 'compute1', 'stopping', power_state=1,
            task_state='powering-off')
        self.gone = db_rows.create_instance(
            self.context, 'compute1', 'gone', power_state=1)
        db_rows.soft_delete_row(self.engine, models.Instance,
                                self.gone.id)
        self.elsewhere = db_rows.create_instance(
            self.context, 'compute2', 'elsewhere', power_state=1)
        self.asker = nf_context.RequestContext(
            user_id='fence-agent', project_id='ops', is_admin=True,
            roles=['admin'])
        # A force-down marks the host's servers powered off.
        self.marking = self.useFixture(configuration.ConfFixture(
            force_down_marks_instances_shutdown=True)).conf

    def _states(self, server, deleted_too=False):
        found = instance_obj.get_record(
            self.context, server.uuid, deleted_too=deleted_too)
        return found.vm_state, found.task_state, found.power_state

    def _actions(self, server):
        return [(action.action, action.request_id, action.user_id)
                for action in instance_action.get_all(self.context,
                                                      server.uuid)]

    def _rename(self, old, new):
        with self.engine.begin() as connection:
            if sa.inspect(connection).has_table(old):
                connection.execute(sa.text(
                    'ALTER TABLE %s RENAME TO %s' % (old, new)))

    def _forced_down(self, host):
        return service_obj.Service.get_by_host_and_binary(
            self.context, host, 'nova-compute').forced_down


class _HostOperationsMixin(_HostsBase):

    def test_mark_shutdown_changes_every_live_server_of_the_host(self):
        changes = operations.mark_shutdown(self.asker, 'compute1', _down)

        self.assertEqual([self.running.uuid, self.stopping.uuid],
                         [change.after.uuid for change in changes])
        self.assertEqual(('active', None, 4), self._states(self.running))
        # A stop asked before the fence is over: the server is off.
        self.assertEqual(('stopped', None, 4), self._states(self.stopping))
        self.assertEqual(('active', None, 1),
                         self._states(self.gone, deleted_too=True))
        self.assertEqual(('active', None, 1), self._states(self.elsewhere))
        recorded = ('markShutdown', self.asker.request_id, 'fence-agent')
        self.assertEqual([recorded], self._actions(self.running))
        self.assertEqual([recorded], self._actions(self.stopping))
        self.assertEqual([], self._actions(self.elsewhere))

    def test_the_answer_has_each_server_before_and_after(self):
        change = operations.mark_shutdown(self.asker, 'compute1', _down)[1]

        self.assertEqual(('active', 'powering-off', 1),
                         (change.before.vm_state, change.before.task_state,
                          change.before.power_state))
        self.assertEqual(('stopped', None, 4),
                         (change.after.vm_state, change.after.task_state,
                          change.after.power_state))

    def test_a_second_mark_changes_and_records_nothing(self):
        operations.mark_shutdown(self.asker, 'compute1', _down)

        self.assertEqual([], operations.mark_shutdown(self.asker,
                                                      'compute1', _down))
        self.assertEqual(1, len(self._actions(self.running)))

    def test_reset_state_sets_every_server_and_clears_tasks(self):
        changes = operations.reset_state(self.asker, 'compute1', 'error',
                                         _down)

        self.assertEqual(2, len(changes))
        self.assertEqual(('error', None, 1), self._states(self.running))
        self.assertEqual(('error', None, 1), self._states(self.stopping))
        self.assertEqual(('active', None, 1), self._states(self.elsewhere))
        self.assertEqual([('resetState', self.asker.request_id,
                           'fence-agent')], self._actions(self.stopping))

    def test_refused_while_the_service_is_up_changes_nothing(self):
        seen = []

        def is_up(service):
            seen.append((service.host, service.binary, service.forced_down))
            return True

        error = self.assertRaises(exception.ComputeHostStillUp,
                                  operations.mark_shutdown, self.asker,
                                  'compute1', is_up)

        self.assertIn('Compute service of compute1 is still up', str(error))
        self.assertEqual([('compute1', 'nova-compute', True)], seen)
        self.assertEqual(('active', 'powering-off', 1),
                         self._states(self.stopping))
        self.assertEqual([], self._actions(self.running))

    def test_a_host_without_compute_service_is_not_found(self):
        self.assertRaises(exception.ComputeHostNotFound,
                          operations.reset_state, self.asker, 'nowhere',
                          'active', _down)

    def test_a_failure_after_the_updates_leaves_nothing_changed(self):
        # The action records cannot be written: the servers' UPDATEs,
        # already run in the same transaction, must be rolled back too.
        self._rename('instance_actions', 'instance_actions_away')
        self.addCleanup(self._rename, 'instance_actions_away',
                        'instance_actions')

        # oslo.db wraps what PostgreSQL and SQLite say, not MySQL's.
        try:
            operations.mark_shutdown(self.asker, 'compute1', _down)
        except (db_exc.DBError, sa.exc.SQLAlchemyError,
                exception.DatabaseUnavailable) as error:
            self.assertIn('instance_actions', str(error))
        else:
            self.fail('the operation succeeded without its action table')

        self._rename('instance_actions_away', 'instance_actions')
        self.assertEqual(('active', None, 1), self._states(self.running))
        self.assertEqual(('active', 'powering-off', 1),
                         self._states(self.stopping))

    def test_a_host_of_many_servers_is_changed_whole(self):
        for number in range(520):
            db_rows.create_instance(self.context, 'compute2',
                                    'many-%d' % number, power_state=1)

        changes = operations.mark_shutdown(self.asker, 'compute2', _down)

        # More servers than one UPDATE names.
        self.assertEqual(521, len(changes))
        self.assertEqual({4}, {server.power_state for server in
                               instance_obj.get_by_host(
                                   self.context, 'compute2')})

    def test_a_force_down_can_mark_its_servers_shut_down(self):
        service_obj.Service.update_compute(
            self.asker, {'forced_down': True}, host='compute2',
            conf=self.marking)

        self.assertTrue(self._forced_down('compute2'))
        self.assertEqual(('active', None, 4), self._states(self.elsewhere))
        self.assertEqual([('markShutdown', self.asker.request_id,
                           'fence-agent')], self._actions(self.elsewhere))
        self.assertEqual(('active', None, 1), self._states(self.running))

    def test_clearing_a_force_down_marks_nothing(self):
        service_obj.Service.update_compute(
            self.asker, {'forced_down': False}, host='compute1',
            conf=self.marking)

        self.assertFalse(self._forced_down('compute1'))
        self.assertEqual(('active', None, 1), self._states(self.running))

    def test_a_force_down_that_cannot_mark_is_not_written(self):
        self._rename('instance_actions', 'instance_actions_away')
        self.addCleanup(self._rename, 'instance_actions_away',
                        'instance_actions')

        try:
            service_obj.Service.update_compute(
                self.asker, {'forced_down': True}, host='compute2',
                conf=self.marking)
        except (db_exc.DBError, sa.exc.SQLAlchemyError,
                exception.DatabaseUnavailable):
            pass
        else:
            self.fail('the force-down succeeded without its action table')

        self._rename('instance_actions_away', 'instance_actions')
        self.assertFalse(self._forced_down('compute2'))
        self.assertEqual(('active', None, 1), self._states(self.elsewhere))


class _ConcurrentHostOperationsMixin(_HostsBase):
    """Concurrent requests on database servers (PostgreSQL, MariaDB).

    The test's SQLite is one in-memory connection shared by every thread.
    """

    def _concurrently(self, *calls):
        barrier = threading.Barrier(len(calls))
        outcomes = [None] * len(calls)

        def run(index, call):
            barrier.wait()
            try:
                outcomes[index] = call()
            except exception.NovaForcedownException as exc:
                outcomes[index] = exc

        threads = [threading.Thread(target=run, args=(index, call))
                   for index, call in enumerate(calls)]
        for thread in threads:
            thread.start()
        for thread in threads:
            thread.join()
        return outcomes

    def test_concurrent_marks_change_each_server_once(self):
        outcomes = self._concurrently(*[
            lambda: operations.mark_shutdown(self.asker, 'compute1', _down)
        ] * 4)

        self.assertEqual([0, 0, 0, 2], sorted(len(changes)
                                              for changes in outcomes))
        self.assertEqual(1, len(self._actions(self.running)))
        self.assertEqual(1, len(self._actions(self.stopping)))

    def test_a_mark_and_a_cleared_force_down_serialize(self):
        # Whichever commits first, the mark never sees a service up yet
        # runs: it is refused, or it changed the servers while down.
        def is_up(service):
            return not service.forced_down

        mark, _ = self._concurrently(
            lambda: operations.mark_shutdown(self.asker, 'compute1', is_up),
            lambda: service_obj.Service.update_compute(
                self.asker, {'forced_down': False}, host='compute1'))

        if isinstance(mark, exception.ComputeHostStillUp):
            self.assertEqual(('active', None, 1), self._states(self.running))
        else:
            self.assertEqual(2, len(mark), mark)
            self.assertEqual(('active', None, 4), self._states(self.running))
        self.assertFalse(self._forced_down('compute1'))


databases.backend_test_cases(_HostOperationsMixin, globals())
databases.backend_test_cases(
    _ConcurrentHostOperationsMixin, globals(),
    backend_fixtures=databases.MIGRATED_FIXTURES[1:])
