"""Service objects on real SQLite, PostgreSQL and MariaDB databases."""

import re

import fixtures
from oslo_utils import timeutils

from nova_forcedown.db import engine as db_engine
from nova_forcedown.db import models
from nova_forcedown import exception
from nova_forcedown.objects import aggregate as aggregate_obj
from nova_forcedown.objects import compute_node as compute_node_obj
from nova_forcedown.objects import service as service_obj
from tests.fixtures import databases
from tests.fixtures import db_rows
from tests.fixtures import sql_statements

make_service = db_rows.create_service

_WRITES = ('INSERT', 'UPDATE', 'DELETE')


def _set_columns(statement):
    """The column names an ``UPDATE ... SET ... WHERE`` statement writes."""
    assignments = re.search(r'\bSET\b(.*?)\bWHERE\b', statement, re.S)
    return {part.split('=')[0].strip().strip('`"').rpartition('.')[2]
            for part in assignments.group(1).split(',')}


def _writes(statements):
    """The statements that may write: SQLite's lock taking changes none."""
    return [statement for statement in statements
            if statement.lstrip().upper().startswith(_WRITES) and
            not statement.rstrip().endswith('WHERE 0 = 1')]


def _to_second(moment):
    """MariaDB DATETIME columns keep whole seconds; compare at that grain."""
    return moment.replace(microsecond=0)


def _reload(ctxt, service):
    return service_obj.Service.get_by_id(ctxt, service.id)


class ServiceTestsMixin:

    def test_new_service_is_not_forced_down(self):
        service = make_service(self.context)
        loaded = service_obj.Service.get_by_id(self.context, service.id)
        self.assertFalse(loaded.forced_down)
        self.assertEqual(0, loaded.report_count)

    def test_duplicate_host_and_binary_is_refused(self):
        make_service(self.context)
        self.assertRaises(exception.ServiceExists, make_service, self.context)

    def test_lookups_of_a_missing_service_raise_not_found(self):
        self.assertRaises(exception.ServiceNotFound,
                          service_obj.Service.get_by_id, self.context, 4242)
        self.assertRaises(exception.ServiceNotFound,
                          service_obj.Service.get_by_uuid, self.context,
                          'f6d3a2ba-7c5e-4b0e-9a3b-34c9cf0b1a11')
        self.assertRaises(exception.HostBinaryNotFound,
                          service_obj.Service.get_by_host_and_binary,
                          self.context, 'compute1', 'nova-compute')


class ServiceSaveTestsMixin:

    def _save_statements(self, service):
        """The statements of a save, but SQLite's write lock taken first."""
        with sql_statements.recorded_statements(self.engine) as statements:
            service.save()
        return [statement for statement in statements
                if statement != str(db_engine.TAKE_WRITE_LOCK)]

    def test_save_is_one_update_of_the_changed_columns(self):
        service = make_service(self.context)
        service.forced_down = True

        statements = self._save_statements(service)

        self.assertEqual(1, len(statements), statements)
        self.assertEqual({'forced_down', 'updated_at'},
                         _set_columns(statements[0]))
        self.assertTrue(_reload(self.context, service).forced_down)

    def test_save_of_disable_with_reason_writes_those_two(self):
        service = make_service(self.context)
        service.disabled = True
        service.disabled_reason = 'hardware check'

        statements = self._save_statements(service)

        self.assertEqual(1, len(statements), statements)
        self.assertEqual({'disabled', 'disabled_reason', 'updated_at'},
                         _set_columns(statements[0]))
        stored = _reload(self.context, service)
        self.assertTrue(stored.disabled)
        self.assertEqual('hardware check', stored.disabled_reason)
        self.assertEqual(_to_second(stored.updated_at),
                         _to_second(service.updated_at))

    def test_save_without_changes_runs_no_sql(self):
        service = make_service(self.context)
        self.assertEqual([], self._save_statements(service))

    def test_admin_write_is_not_a_heartbeat(self):
        service = make_service(self.context)
        service.forced_down = True
        service.save()
        stored = _reload(self.context, service)
        self.assertEqual(0, stored.report_count)
        self.assertIsNone(stored.last_seen_up)

    def test_save_of_a_deleted_service_raises_not_found(self):
        service = make_service(self.context, binary='nova-scheduler')
        _reload(self.context, service).destroy()
        service.disabled = True
        self.assertRaises(exception.ServiceNotFound, service.save)


class LostUpdateTestsMixin:
    """Two writers with stale copies never undo each other's change."""

    def test_stale_heartbeat_save_keeps_admin_force_down(self):
        service = make_service(self.context)
        agent_copy = service_obj.Service.get_by_id(self.context, service.id)

        admin_copy = service_obj.Service.get_by_host_and_binary(
            self.context, 'compute1', 'nova-compute')
        admin_copy.forced_down = True
        admin_copy.disabled = True
        admin_copy.disabled_reason = 'fenced'
        admin_copy.save()

        agent_copy.report_count += 1
        agent_copy.save()

        stored = service_obj.Service.get_by_id(self.context, service.id)
        self.assertTrue(stored.forced_down)
        self.assertTrue(stored.disabled)
        self.assertEqual('fenced', stored.disabled_reason)
        self.assertEqual(1, stored.report_count)
        self.assertIsNotNone(stored.last_seen_up)

    def test_heartbeat_after_force_down_leaves_it_forced_down(self):
        service = make_service(self.context)
        agent_copy = service_obj.Service.get_by_id(self.context, service.id)
        service.forced_down = True
        service.save()

        agent_copy.record_heartbeat()

        self.assertTrue(agent_copy.forced_down)
        stored = service_obj.Service.get_by_id(self.context, service.id)
        self.assertTrue(stored.forced_down)
        self.assertEqual(1, stored.report_count)

    def test_stale_admin_save_keeps_heartbeats(self):
        service = make_service(self.context)
        admin_copy = _reload(self.context, service)
        for _ in range(3):
            service.record_heartbeat()

        admin_copy.forced_down = True
        admin_copy.save()

        stored = _reload(self.context, service)
        self.assertTrue(stored.forced_down)
        self.assertEqual(3, stored.report_count)
        self.assertEqual(_to_second(service.last_seen_up),
                         _to_second(stored.last_seen_up))

    def test_two_admins_with_stale_copies_both_win(self):
        service = make_service(self.context)
        first = _reload(self.context, service)
        second = _reload(self.context, service)

        first.disabled = True
        first.disabled_reason = 'fenced by monitor'
        first.save()
        second.forced_down = True
        second.save()

        stored = _reload(self.context, service)
        self.assertTrue(stored.disabled)
        self.assertEqual('fenced by monitor', stored.disabled_reason)
        self.assertTrue(stored.forced_down)

    def test_force_up_reaches_a_stale_agent_on_its_next_heartbeat(self):
        service = make_service(self.context, forced_down=True)
        agent_copy = _reload(self.context, service)
        service.forced_down = False
        service.save()

        agent_copy.record_heartbeat()

        self.assertFalse(agent_copy.forced_down)
        self.assertFalse(_reload(self.context, service).forced_down)


class RecordHeartbeatTestsMixin:

    def test_heartbeat_counts_from_the_stored_value(self):
        service = make_service(self.context, report_count=5)
        stale = _reload(self.context, service)
        service.record_heartbeat()
        service.record_heartbeat()

        stale.record_heartbeat()

        self.assertEqual(8, stale.report_count)
        self.assertEqual(8, _reload(self.context, service).report_count)

    def test_heartbeat_writes_only_report_count_and_last_seen_up(self):
        service = make_service(self.context)

        with sql_statements.recorded_statements(self.engine) as statements:
            service.record_heartbeat()

        writes = _writes(statements)
        self.assertEqual(1, len(writes), statements)
        self.assertEqual({'report_count', 'last_seen_up', 'updated_at'},
                         _set_columns(writes[0]))

    def test_heartbeat_leaves_admin_fields_and_identity_alone(self):
        service = make_service(self.context, disabled=True,
                               disabled_reason='rack move',
                               forced_down=True)
        before = _reload(self.context, service)

        service.record_heartbeat()

        after = _reload(self.context, service)
        for field in ('host', 'binary', 'topic', 'uuid', 'version',
                      'disabled', 'disabled_reason', 'forced_down',
                      'created_at'):
            self.assertEqual(before[field], after[field], field)

    def test_heartbeat_moves_last_seen_up_to_now(self):
        service = make_service(self.context)
        started = _to_second(timeutils.utcnow(with_timezone=True))

        service.record_heartbeat()

        stored = _reload(self.context, service)
        self.assertEqual(1, stored.report_count)
        self.assertGreaterEqual(stored.last_seen_up, started)
        self.assertEqual(_to_second(stored.last_seen_up),
                         _to_second(service.last_seen_up))

    def test_heartbeat_brings_back_the_stored_admin_flags(self):
        service = make_service(self.context)
        agent_copy = _reload(self.context, service)
        service.forced_down = True
        service.disabled = True
        service.save()

        agent_copy.record_heartbeat()

        self.assertTrue(agent_copy.forced_down)
        self.assertTrue(agent_copy.disabled)
        self.assertEqual(set(), agent_copy.obj_what_changed())

    def test_heartbeat_of_a_deleted_service_raises_not_found(self):
        service = make_service(self.context, binary='nova-scheduler')
        _reload(self.context, service).destroy()
        self.assertRaises(exception.ServiceNotFound, service.record_heartbeat)


class RecordHeartbeatsTestsMixin:
    """Many services' heartbeats at once, as an agent of many hosts sends."""

    def _services(self, count, **fields):
        return [make_service(self.context, host='compute%d' % number,
                             **fields) for number in range(count)]

    def test_every_service_counts_once_from_its_stored_value(self):
        services = self._services(3, report_count=4)
        _reload(self.context, services[1]).record_heartbeat()

        gone = service_obj.ServiceList.record_heartbeats(services)

        self.assertEqual([], gone)
        self.assertEqual([5, 6, 5], [service.report_count
                                     for service in services])
        self.assertEqual([5, 6, 5], [_reload(self.context, service)
                                     .report_count for service in services])

    def test_deleted_services_are_returned_and_the_rest_still_beat(self):
        services = self._services(3, binary='nova-scheduler')
        _reload(self.context, services[0]).destroy()

        gone = service_obj.ServiceList.record_heartbeats(services)

        self.assertEqual([services[0].host], [service.host
                                              for service in gone])
        self.assertEqual([1, 1], [_reload(self.context, service).report_count
                                  for service in services[1:]])

    def test_admin_flags_come_back_for_each_service(self):
        services = self._services(2)
        fenced = _reload(self.context, services[1])
        fenced.forced_down = True
        fenced.save()

        service_obj.ServiceList.record_heartbeats(services)

        self.assertEqual([False, True], [service.forced_down
                                         for service in services])

    def test_one_update_per_chunk_of_services(self):
        self.useFixture(fixtures.MonkeyPatch(
            'nova_forcedown.db.services.HEARTBEAT_CHUNK', 2))
        services = self._services(5)

        with sql_statements.recorded_statements(self.engine) as statements:
            service_obj.ServiceList.record_heartbeats(services)

        self.assertEqual(3, len(_writes(statements)), statements)
        self.assertEqual([1] * 5, [_reload(self.context, service)
                                   .report_count for service in services])


class ServiceListTestsMixin:

    def setUp(self):
        super().setUp()
        for host, binary in (('compute1', 'nova-compute'),
                             ('compute2', 'nova-compute'),
                             ('controller', 'nova-scheduler'),
                             ('controller', 'nova-conductor'),
                             ('api1', 'nova-osapi_compute'),
                             ('api1', 'nova-metadata')):
            make_service(self.context, host=host, binary=binary)
        gone = make_service(self.context, host='compute3')
        db_rows.soft_delete_row(self.engine, models.Service, gone.id)

    def _listed(self, **filters):
        services = service_obj.ServiceList.get_all(self.context, **filters)
        return [(service.host, service.binary) for service in services]

    def test_all_live_services_in_id_order(self):
        self.assertEqual([('compute1', 'nova-compute'),
                          ('compute2', 'nova-compute'),
                          ('controller', 'nova-scheduler'),
                          ('controller', 'nova-conductor'),
                          ('api1', 'nova-osapi_compute'),
                          ('api1', 'nova-metadata')], self._listed())

    def test_filter_by_host(self):
        self.assertEqual([('controller', 'nova-scheduler'),
                          ('controller', 'nova-conductor')],
                         self._listed(host='controller'))

    def test_filter_by_binary(self):
        self.assertEqual([('compute1', 'nova-compute'),
                          ('compute2', 'nova-compute')],
                         self._listed(binary='nova-compute'))

    def test_filter_by_host_and_binary(self):
        self.assertEqual([('compute2', 'nova-compute')],
                         self._listed(host='compute2', binary='nova-compute'))
        self.assertEqual([], self._listed(host='compute2',
                                          binary='nova-scheduler'))

    def test_unknown_host_or_binary_gives_an_empty_list(self):
        self.assertEqual([], self._listed(host='nowhere'))
        self.assertEqual([], self._listed(binary='nova-nothing'))
        self.assertEqual([], self._listed(host='compute3'))

    def test_filters_are_exact_not_patterns(self):
        self.assertEqual([], self._listed(host='compute'))
        self.assertEqual([], self._listed(host='compute%'))

    def test_without_api_hides_api_and_metadata_services(self):
        listed = self._listed(include_api=False)
        self.assertEqual(4, len(listed))
        self.assertNotIn('api1', {host for host, _ in listed})

    def test_filtering_happens_in_one_sql_statement(self):
        with sql_statements.recorded_statements(self.engine) as statements:
            listed = self._listed(host='controller', include_api=False)
        self.assertEqual(2, len(listed))
        self.assertEqual(1, len(statements), statements)
        self.assertIn('WHERE', statements[0].upper())


class ServiceDestroyTestsMixin:

    def setUp(self):
        super().setUp()
        self.service = make_service(self.context)
        self.node = db_rows.create_compute_node(self.context,
                                                self.service)

    def test_compute_with_instances_is_refused_and_nothing_written(self):
        db_rows.create_instance(self.context, 'compute1')

        with sql_statements.recorded_statements(self.engine) as statements:
            self.assertRaises(exception.ServiceHostsInstances,
                              self.service.destroy)

        self.assertEqual([], _writes(statements))
        self.assertEqual('compute1',
                         _reload(self.context, self.service).host)
        self.assertEqual(1, len(compute_node_obj.get_all_by_host(
            self.context, 'compute1')))

    def _migration(self, status, **hosts):
        with self.engine.begin() as connection:
            connection.execute(models.Migration.__table__.insert().values(
                status=status, migration_type='evacuation', deleted=0,
                **hosts))

    def test_a_migration_in_progress_is_refused_and_nothing_written(self):
        for hosts in ({'source_compute': 'compute1'},
                      {'dest_compute': 'compute1'}):
            with self.subTest(**hosts):
                self._migration('accepted', **hosts)
                with sql_statements.recorded_statements(self.engine) as sql:
                    self.assertRaises(
                        exception.ServiceHasMigrationsInProgress,
                        self.service.destroy)
                self.assertEqual([], _writes(sql))
                self.assertEqual('compute1',
                                 _reload(self.context, self.service).host)
                with self.engine.begin() as connection:
                    connection.execute(
                        models.Migration.__table__.update().values(
                            status='failed'))

    def test_finished_migrations_do_not_block_the_delete(self):
        for status in ('done', 'completed', 'error', 'failed'):
            self._migration(status, source_compute='compute1')
        self.service.destroy()
        self.assertRaises(exception.ServiceNotFound, _reload, self.context,
                          self.service)

    def test_the_host_leaves_its_aggregates(self):
        make_service(self.context, host='compute2')
        aggregates = {name: aggregate_obj.create(
            self.context, name, availability_zone=zone).id
            for name, zone in (('kept', None), ('rack', None),
                               ('zone', 'az1'))}
        aggregate_obj.add_host_to(self.context, aggregates['kept'],
                                  'compute2')
        for name in ('rack', 'zone'):
            aggregate_obj.add_host_to(
                self.context, aggregates[name], 'compute1')

        self.service.destroy()

        self.assertEqual([], list(aggregate_obj.get_by_host(
            self.context, 'compute1')))
        self.assertEqual(['compute2'], aggregate_obj.get_by_id(
            self.context, aggregates['kept']).hosts)

    def test_deleted_instances_do_not_block_the_delete(self):
        instance = db_rows.create_instance(self.context, 'compute1')
        db_rows.soft_delete_row(self.engine, models.Instance,
                                instance.id)
        self.service.destroy()
        self.assertRaises(exception.ServiceNotFound, _reload, self.context,
                          self.service)

    def test_destroy_soft_deletes_the_service_and_its_nodes(self):
        self.service.destroy()

        self.assertRaises(exception.ServiceNotFound, _reload, self.context,
                          self.service)
        self.assertEqual(0, len(compute_node_obj.get_all_by_host(
            self.context, 'compute1')))
        with self.engine.connect() as connection:
            node_deleted = connection.scalar(
                models.ComputeNode.__table__.select()
                .with_only_columns(models.ComputeNode.deleted)
                .where(models.ComputeNode.id == self.node.id))
        self.assertNotEqual(0, node_deleted)

    def test_host_and_binary_can_register_again_after_destroy(self):
        self.service.destroy()
        again = make_service(self.context)
        self.assertNotEqual(self.service.id, again.id)

    def test_other_binaries_ignore_instances_and_keep_nodes(self):
        scheduler = make_service(self.context, binary='nova-scheduler')
        db_rows.create_instance(self.context, 'compute1')

        scheduler.destroy()

        self.assertRaises(exception.ServiceNotFound, _reload, self.context,
                          scheduler)
        self.assertEqual(1, len(compute_node_obj.get_all_by_host(
            self.context, 'compute1')))

    def test_destroying_twice_raises_not_found(self):
        stale = _reload(self.context, self.service)
        self.service.destroy()
        self.assertRaises(exception.ServiceNotFound, stale.destroy)


class UpdateComputeTestsMixin:
    """The API's force-down and enable/disable write; a miss says why."""

    def test_force_down_by_host_returns_the_stored_service(self):
        make_service(self.context)
        service = service_obj.Service.update_compute(
            self.context, {'forced_down': True}, host='compute1')
        self.assertTrue(service.forced_down)
        self.assertTrue(_reload(self.context, service).forced_down)

    def test_unknown_host_is_not_found_as_a_host(self):
        self.assertRaises(exception.HostNotFound,
                          service_obj.Service.update_compute, self.context,
                          {'forced_down': True}, host='nowhere')

    def test_host_without_compute_is_not_found_as_a_binary(self):
        make_service(self.context, binary='nova-scheduler')
        self.assertRaises(exception.HostBinaryNotFound,
                          service_obj.Service.update_compute, self.context,
                          {'forced_down': True}, host='compute1')

    def test_unknown_uuid_is_a_service_not_found(self):
        self.assertRaises(exception.ServiceNotFound,
                          service_obj.Service.update_compute, self.context,
                          {'forced_down': True},
                          uuid='f6d3a2ba-7c5e-4b0e-9a3b-34c9cf0b1a11')

    def test_uuid_of_another_binary_is_not_compute_and_unchanged(self):
        scheduler = make_service(self.context, binary='nova-scheduler')
        self.assertRaises(exception.ServiceNotCompute,
                          service_obj.Service.update_compute, self.context,
                          {'forced_down': True}, uuid=scheduler.uuid)
        self.assertFalse(_reload(self.context, scheduler).forced_down)


for _mixin in (ServiceTestsMixin, UpdateComputeTestsMixin,
               ServiceSaveTestsMixin, LostUpdateTestsMixin,
               RecordHeartbeatTestsMixin, RecordHeartbeatsTestsMixin,
               ServiceListTestsMixin,
               ServiceDestroyTestsMixin):
    databases.backend_test_cases(_mixin, globals())
