"""Creating and deleting servers on SQLite, PostgreSQL and MariaDB: placed
only on hosts that are up, enabled and not forced down, never beyond a
node's room, built and destroyed by the host's agent.

Five hosts of 4 GiB: ``up-1`` and ``up-2`` take servers; ``disabled`` is
disabled, ``forced`` forced down, ``stale`` has not reported for longer
than service_down_time. Servers take 1 GiB each.
"""

import datetime
import threading
import time

from oslo_utils import timeutils
from oslo_utils import uuidutils
import sqlalchemy as sa

from nova_forcedown.compute.drivers import base as driver_base
from nova_forcedown.compute.drivers import fake as fake_driver
from nova_forcedown.compute import tasks as compute_tasks
from nova_forcedown import context as nf_context
from nova_forcedown.objects import compute_node
from nova_forcedown.objects import instance as instance_obj
from nova_forcedown.objects import instance_action
from nova_forcedown.objects import instance_build
from nova_forcedown.objects import instance_delete
from nova_forcedown.objects import instance_fault
from nova_forcedown.objects import service as service_obj
from nova_forcedown.scheduler import host_selection
from nova_forcedown.servicegroup import api as servicegroup_api
from tests.fixtures import configuration
from tests.fixtures import databases
from tests.fixtures import db_rows
from tests.fixtures import processes
from tests.unit import test_heartbeat

GIB = 1024
FLAVOR = {'flavorid': 'g1', 'name': 'g1', 'memory_mb': GIB, 'vcpus': 1,
          'root_gb': 1, 'ephemeral_gb': 0, 'swap': 0, 'extra_specs': {}}
USABLE = ('up-1', 'up-2')


class _FakeAgentConf:
    """What the fake driver reads of an agent's options."""
    hosts = 0
    host_prefix = 'none-'
    instances = 0
    driver = 'fake'


class BrokenDriver(fake_driver.FakeDriver):
    """A hypervisor that cannot build anything."""

    def spawn(self, instance):
        raise driver_base.DriverError('the hypervisor is out of order')


class _ServerBuildBase:

    def setUp(self):
        super().setUp()
        self.conf = self.useFixture(configuration.ConfFixture()).conf
        self.servicegroup = servicegroup_api.API(self.conf)
        now = timeutils.utcnow()
        stale = now - datetime.timedelta(
            seconds=self.conf.service_down_time + 30)
        for host, fields in (('up-1', {}), ('up-2', {}),
                             ('disabled', {'disabled': True}),
                             ('forced', {'forced_down': True}),
                             ('stale', {'last_seen_up': stale})):
            fields.setdefault('last_seen_up', now)
            service = db_rows.create_service(self.context, host=host,
                                             **fields)
            db_rows.create_compute_node(
                self.context, service, host, memory_mb=4 * GIB, vcpus=64,
                local_gb=1000)
        self.user = nf_context.RequestContext(
            user_id='user', project_id='project', roles=['member'])

    def create(self, count=1, zone=None, host=None):
        values = [{'uuid': uuidutils.generate_uuid(),
                   'display_name': 'server-%d' % index,
                   'project_id': 'project', 'user_id': 'user',
                   'flavor': FLAVOR, 'availability_zone': zone,
                   'reservation_id': 'r-test'}
                  for index in range(count)]
        choices = host_selection.build_choices(
            self.user, self.conf, self.servicegroup,
            host_selection.BuildRequest(
                host=None, availability_zone=zone,
                **instance_build.need_of(FLAVOR)._asdict()), host=host)
        return instance_build.create(self.user, choices, values)

    def runner(self, host, driver=None):
        return compute_tasks.TaskRunner(
            self.context, driver or fake_driver.FakeDriver(_FakeAgentConf),
            [host], self.conf, test_heartbeat.FakeClock(),
            servicegroup=self.servicegroup)

    def fault(self, uuid):
        return instance_fault.latest_of(self.context, [uuid])[uuid].message

    def record(self, uuid):
        return instance_obj.get_record(self.context, uuid, deleted_too=True)

    def live_by_host(self):
        placed = {}
        for host in USABLE + ('disabled', 'forced', 'stale'):
            placed[host] = len(instance_obj.get_by_host(self.context, host))
        return placed


class _ServerBuildMixin(_ServerBuildBase):

    def test_a_server_is_built_on_a_usable_host_then_active(self):
        record, = self.create()
        self.assertIn(record.host, USABLE)
        self.assertEqual(('building', 'spawning'),
                         (record.vm_state, record.task_state))

        self.assertEqual(1, self.runner(record.host).run_pending())

        built = self.record(record.uuid)
        self.assertEqual(('active', None, 1),
                         (built.vm_state, built.task_state,
                          built.power_state))
        self.assertIsNotNone(built.launched_at)
        self.assertEqual(['private'], [port['network']
                                       for port in built.network_info])
        action = instance_action.latest(self.context, record.uuid, 'create')
        self.assertEqual([('compute__do_build_and_run_instance', record.host,
                           'Success')],
                         [(event.event, event.host, event.result) for event
                          in instance_action.events(self.context,
                                                    action.id)])

    def test_servers_fill_the_usable_hosts_and_no_more(self):
        records = self.create(count=8)

        self.assertEqual({'up-1': 4, 'up-2': 4, 'disabled': 0, 'forced': 0,
                          'stale': 0}, self.live_by_host())
        self.assertEqual({'building'}, {record.vm_state
                                        for record in records})

    def test_a_request_that_does_not_fit_is_refused_whole(self):
        records = self.create(count=9)

        self.assertEqual({'up-1': 0, 'up-2': 0, 'disabled': 0, 'forced': 0,
                          'stale': 0}, self.live_by_host())
        self.assertEqual({('error', None)}, {
            (self.record(record.uuid).vm_state,
             self.record(record.uuid).host) for record in records})
        faults = instance_fault.latest_of(
            self.context, [record.uuid for record in records])
        self.assertEqual({instance_fault.NO_VALID_HOST},
                         {fault.message for fault in faults.values()})

    def test_a_host_forced_down_after_the_scheduler_read_is_not_used(self):
        choices = host_selection.build_choices(
            self.user, self.conf, self.servicegroup,
            host_selection.BuildRequest(
                None, None, **instance_build.need_of(FLAVOR)._asdict()))
        for host in USABLE:
            service_obj.Service.update_compute(
                self.context, {'forced_down': True}, host=host)

        record, = instance_build.create(self.user, choices, [{
            'uuid': uuidutils.generate_uuid(), 'display_name': 'late',
            'flavor': FLAVOR, 'project_id': 'project'}])

        self.assertEqual(('error', None), (record.vm_state, record.host))

    def test_a_named_host_is_filtered_as_any_other(self):
        for host in ('disabled', 'forced', 'stale'):
            record, = self.create(host=host)
            self.assertEqual(('error', None), (record.vm_state, record.host))
        record, = self.create(host='up-2')
        self.assertEqual('up-2', record.host)

    def test_a_failed_build_is_retried_on_another_host(self):
        record, = self.create()
        other, = set(USABLE) - {record.host}

        self.runner(record.host, BrokenDriver(_FakeAgentConf)).run_pending()

        moved = self.record(record.uuid)
        self.assertEqual(('building', 'spawning', other),
                         (moved.vm_state, moved.task_state, moved.host))
        self.runner(other).run_pending()
        self.assertEqual(('active', other),
                         (self.record(record.uuid).vm_state,
                          self.record(record.uuid).host))
        action = instance_action.latest(self.context, record.uuid, 'create')
        self.assertEqual([(record.host, 'Error'), (other, 'Success')],
                         [(event.host, event.result) for event in
                          instance_action.events(self.context, action.id)])

    def test_a_build_failed_on_every_host_is_in_error_off_them(self):
        record, = self.create()
        other, = set(USABLE) - {record.host}

        for host in (record.host, other):
            self.runner(host, BrokenDriver(_FakeAgentConf)).run_pending()

        failed = self.record(record.uuid)
        self.assertEqual(('error', None, None),
                         (failed.vm_state, failed.task_state, failed.host))
        self.assertEqual(instance_build.HOSTS_EXHAUSTED % {
            'uuid': record.uuid}, self.fault(record.uuid))
        self.assertEqual(0, self.live_by_host()[other])

    def test_one_attempt_only_when_max_attempts_is_1(self):
        self.conf.set_override('max_attempts', 1, group='scheduler')
        record, = self.create()

        self.runner(record.host, BrokenDriver(_FakeAgentConf)).run_pending()

        failed = self.record(record.uuid)
        self.assertEqual(('error', None), (failed.vm_state, failed.host))
        self.assertEqual(
            'Exceeded maximum number of retries. Exceeded max scheduling '
            'attempts 1 for instance %s. Last exception: the hypervisor is '
            'out of order' % record.uuid, self.fault(record.uuid))

    def test_a_delete_is_carried_out_by_the_host_and_frees_its_room(self):
        records = self.create(count=8)
        runner = self.runner('up-1')
        runner.run_pending()
        gone = [record for record in records if record.host == 'up-1'][0]

        instance_delete.delete(self.user, gone, host_up=True)
        self.assertEqual('deleting', self.record(gone.uuid).task_state)
        runner.run_pending()

        deleted = self.record(gone.uuid)
        self.assertEqual(('deleted', None), (deleted.vm_state,
                                             deleted.task_state))
        self.assertTrue(deleted.deleted)
        self.assertEqual('up-1', self.create()[0].host)

    def test_a_delete_told_while_the_build_runs_follows_the_build(self):
        record, = self.create()
        spawning, release = threading.Event(), threading.Event()

        class SlowDriver(fake_driver.FakeDriver):
            def spawn(self, instance):
                spawning.set()
                release.wait(30)
                return super().spawn(instance)

        # Told over RPC: no look but when woken (its clock never moves,
        # so no reconciliation comes either).
        runner = compute_tasks.TaskRunner(
            self.context, SlowDriver(_FakeAgentConf), [record.host],
            self.conf, test_heartbeat.FakeClock(), told=True,
            servicegroup=self.servicegroup)
        runner.start()
        self.addCleanup(runner.stop)
        runner.wake(record.uuid)
        self.assertTrue(spawning.wait(30))
        instance_delete.delete(self.user, self.record(record.uuid),
                               host_up=True)
        # The delete's cast, while the build runs: skipped then.
        runner.wake(record.uuid)
        time.sleep(0.5)
        release.set()

        self.assertTrue(processes.wait_until(
            lambda: self.record(record.uuid).deleted, timeout=30),
            self.record(record.uuid))

    def test_a_delete_waiting_on_a_host_gone_down_is_done_at_once(self):
        record, = self.create()
        instance_delete.delete(self.user, record, host_up=True)
        self.assertEqual('deleting', self.record(record.uuid).task_state)

        instance_delete.delete(self.user, record, host_up=True)
        self.assertFalse(self.record(record.uuid).deleted)
        instance_delete.delete(self.user, record, host_up=False)

        self.assertTrue(self.record(record.uuid).deleted)

    def test_a_server_of_a_host_that_is_down_is_deleted_at_once(self):
        record, = self.create()

        instance_delete.delete(self.user, record, host_up=False)

        deleted = self.record(record.uuid)
        self.assertEqual(('deleted', None), (deleted.vm_state,
                                             deleted.task_state))
        self.assertTrue(deleted.deleted)
        self.assertEqual(0, self.runner(record.host).run_pending())


class _ConcurrentBuildsMixin(_ServerBuildBase):
    """On database servers (the test's SQLite is one shared connection)."""

    def test_concurrent_creates_never_overcommit(self):
        clients = 12
        barrier = threading.Barrier(clients)
        errors = []
        made = []

        def create():
            barrier.wait()
            try:
                made.extend(self.create())
            except Exception as exc:  # noqa: the test reports them
                errors.append(repr(exc))

        threads = [threading.Thread(target=create) for _ in range(clients)]
        for thread in threads:
            thread.start()
        for thread in threads:
            thread.join(60)

        self.assertEqual([], errors)
        self.assertEqual({'up-1': 4, 'up-2': 4, 'disabled': 0, 'forced': 0,
                          'stale': 0}, self.live_by_host())
        self.assertEqual(4, sum(record.vm_state == 'error'
                                for record in made))


class _OppositeOrdersMixin(_ServerBuildBase):
    """Two creates that ranked the two usable nodes oppositely, both full.

    Each tries its first node, finds no room and tries the other's.
    """

    def _deadlocks(self):
        with self.engine.connect() as connection:
            return connection.execute(sa.text(
                'SELECT deadlocks FROM pg_stat_database WHERE datname = '
                'current_database()')).scalar()

    def test_creates_on_full_nodes_never_wait_on_each_other(self):
        self.create(count=8)
        nodes = {host: compute_node.compute_hosts(
            self.user, [host]).nodes[host][0].capacity for host in USABLE}
        orders = [
            [compute_node.NodeUsage(nodes['up-1'], (0, 0, 0)),
             compute_node.NodeUsage(nodes['up-2'], (0, GIB, 0))],
            [compute_node.NodeUsage(nodes['up-1'], (0, GIB, 0)),
             compute_node.NodeUsage(nodes['up-2'], (0, 0, 0))]]
        before = self._deadlocks()
        made = []

        def create(choices, barrier):
            barrier.wait()
            made.extend(instance_build.create(self.user, choices, [{
                'uuid': uuidutils.generate_uuid(), 'display_name': 'late',
                'flavor': FLAVOR, 'project_id': 'project'}]))

        for _ in range(10):
            barrier = threading.Barrier(2)
            threads = [threading.Thread(target=create,
                                        args=(order, barrier))
                       for order in orders]
            for thread in threads:
                thread.start()
            for thread in threads:
                thread.join(60)

        self.assertEqual(20, len(made))
        self.assertEqual({'error'}, {record.vm_state for record in made})
        self.assertEqual(0, self._deadlocks() - before)


databases.backend_test_cases(_ServerBuildMixin, globals())
databases.backend_test_cases(
    _ConcurrentBuildsMixin, globals(),
    backend_fixtures=databases.MIGRATED_FIXTURES[1:])
# Deadlocks as PostgreSQL counts them.
databases.backend_test_cases(
    _OppositeOrdersMixin, globals(),
    backend_fixtures=databases.MIGRATED_FIXTURES[1:2])
