"""Compute nodes with their services on SQLite, PostgreSQL and MariaDB."""

from oslo_utils import timeutils

from nova_forcedown.db import models
from nova_forcedown import exception
from nova_forcedown.objects import compute_node as compute_node_obj
from nova_forcedown.objects import service as service_obj
from tests.fixtures import databases
from tests.fixtures import db_rows
from tests.fixtures import sql_statements


UNKNOWN_UUID = '0ab2b1a4-7bd6-4c5e-a1d6-4c4d0a3b9f11'


def _hostnames(nodes):
    return [node.hypervisor_hostname for node in nodes]


class _NodesMixin:
    """``count`` compute hosts, each one nova-compute service and node."""

    def _add_hosts(self, count, start=1):
        nodes = []
        for number in range(start, start + count):
            service = db_rows.create_service(
                self.context, host='compute%d' % number)
            nodes.append(db_rows.create_compute_node(
                self.context, service, hostname='node%d' % number))
        return nodes

    def _add_nodes_of_no_compute(self):
        """A node of a scheduler service and a node of no service at all."""
        scheduler = db_rows.create_service(
            self.context, host='controller', binary='nova-scheduler')
        db_rows.create_compute_node(self.context, scheduler,
                                    hostname='on-scheduler')
        db_rows.create_compute_node(self.context, None,
                                    hostname='no-service')


class ListWithServiceTestsMixin(_NodesMixin):

    def _listed_with_statements(self, **kwargs):
        with sql_statements.recorded_statements(self.engine) as statements:
            nodes = compute_node_obj.get_records_with_service(
                self.context, **kwargs)
        return nodes, statements

    def test_each_node_comes_with_its_service(self):
        self._add_hosts(2)
        nodes = compute_node_obj.get_records_with_service(self.context)
        self.assertEqual(['node1', 'node2'], _hostnames(nodes))
        self.assertEqual(['compute1', 'compute2'],
                         [node.service.host for node in nodes])
        self.assertEqual([node.service_id for node in nodes],
                         [node.service.id for node in nodes])
        self.assertFalse(nodes[0].service.forced_down)

    def test_one_statement_whatever_the_number_of_nodes(self):
        self._add_hosts(1)
        nodes, statements = self._listed_with_statements()
        self.assertEqual(1, len(nodes))
        self.assertEqual(1, len(statements), statements)

        self._add_hosts(6, start=2)
        nodes, statements = self._listed_with_statements()
        self.assertEqual(7, len(nodes))
        self.assertEqual(1, len(statements), statements)

    def test_nodes_without_a_live_compute_service_are_left_out(self):
        kept, orphaned = self._add_hosts(2)
        db_rows.soft_delete_row(self.engine, models.Service,
                                orphaned.service_id)
        self._add_nodes_of_no_compute()

        nodes = compute_node_obj.get_records_with_service(self.context)

        self.assertEqual([kept.hypervisor_hostname], _hostnames(nodes))

    def test_node_without_service_id_joins_by_host(self):
        service = db_rows.create_service(self.context, host='legacy')
        db_rows.create_compute_node(self.context, None, host='legacy',
                                    hostname='legacy-node')
        nodes = compute_node_obj.get_records_with_service(self.context)
        self.assertEqual(['legacy-node'], _hostnames(nodes))
        self.assertEqual(service.id, nodes[0].service.id)

    def test_deleted_nodes_are_left_out(self):
        gone, kept = self._add_hosts(2)
        db_rows.soft_delete_row(self.engine, models.ComputeNode, gone.id)
        self.assertEqual(['node2'], _hostnames(
            compute_node_obj.get_records_with_service(self.context)))


class PagingTestsMixin(_NodesMixin):

    def setUp(self):
        super().setUp()
        self.nodes = self._add_hosts(5)

    def _page(self, **kwargs):
        return _hostnames(compute_node_obj.get_records_with_service(
            self.context, **kwargs))

    def test_limit_gives_the_first_nodes(self):
        self.assertEqual(['node1', 'node2'], self._page(limit=2))

    def test_marker_by_integer_id(self):
        self.assertEqual(['node3', 'node4'],
                         self._page(marker=self.nodes[1].id, limit=2))

    def test_marker_by_id_as_given_in_a_query_string(self):
        self.assertEqual(['node4', 'node5'],
                         self._page(marker=str(self.nodes[2].id)))

    def test_marker_by_uuid(self):
        self.assertEqual(['node3', 'node4'],
                         self._page(marker=self.nodes[1].uuid, limit=2))

    def test_marker_of_the_last_node_gives_an_empty_page(self):
        self.assertEqual([], self._page(marker=self.nodes[-1].uuid))

    def test_pages_cover_every_node_once(self):
        seen, marker = [], None
        while True:
            page = compute_node_obj.get_records_with_service(
                self.context, limit=2, marker=marker)
            if not page:
                break
            seen.extend(_hostnames(page))
            marker = page[-1].uuid
        self.assertEqual(['node1', 'node2', 'node3', 'node4', 'node5'], seen)

    def test_unknown_marker_raises_marker_not_found(self):
        deleted = self.nodes[0]
        db_rows.soft_delete_row(self.engine, models.ComputeNode,
                                deleted.id)
        for marker in (424242, '424242', 2 ** 40, '-1', UNKNOWN_UUID,
                       'not-an-id', deleted.id, deleted.uuid):
            self.assertRaises(exception.MarkerNotFound, self._page,
                              marker=marker)


class HostnamePatternTestsMixin(_NodesMixin):

    def setUp(self):
        super().setUp()
        for number, hostname in enumerate(('node_1', 'nodeX1', 'node%2',
                                           'nodeab2', 'other.example.org')):
            service = db_rows.create_service(
                self.context, host='compute%d' % number)
            db_rows.create_compute_node(self.context, service,
                                        hostname=hostname)

    def _matching(self, pattern):
        return _hostnames(compute_node_obj.get_records_with_service(
            self.context, hostname_pattern=pattern))

    def test_pattern_is_a_substring(self):
        self.assertEqual(['node_1', 'nodeX1', 'node%2', 'nodeab2'],
                         self._matching('ode'))
        self.assertEqual(['other.example.org'], self._matching('example'))

    def test_underscore_matches_only_an_underscore(self):
        self.assertEqual(['node_1'], self._matching('node_'))

    def test_percent_matches_only_a_percent(self):
        self.assertEqual(['node%2'], self._matching('%'))
        self.assertEqual(['node%2'], self._matching('e%2'))

    def test_no_match_gives_an_empty_list(self):
        self.assertEqual([], self._matching('missing'))


class GetRecordTestsMixin(_NodesMixin):

    def setUp(self):
        super().setUp()
        self.node, self.other = self._add_hosts(2)

    def test_by_integer_id(self):
        node = compute_node_obj.get_record(self.context, self.node.id)
        self.assertEqual('node1', node.hypervisor_hostname)
        self.assertEqual('compute1', node.service.host)

    def test_by_uuid(self):
        node = compute_node_obj.get_record(self.context, self.other.uuid)
        self.assertEqual(self.other.id, node.id)
        self.assertEqual('compute2', node.service.host)

    def test_unknown_id_or_uuid_raises_not_found(self):
        for node_id in (424242, UNKNOWN_UUID):
            self.assertRaises(exception.ComputeNodeNotFound,
                              compute_node_obj.get_record, self.context,
                              node_id)

    def test_node_whose_service_is_gone_is_not_found(self):
        db_rows.soft_delete_row(self.engine, models.Service,
                                self.node.service_id)
        self.assertRaises(exception.ComputeNodeNotFound,
                          compute_node_obj.get_record, self.context,
                          self.node.id)

    def test_one_statement(self):
        with sql_statements.recorded_statements(self.engine) as statements:
            compute_node_obj.get_record(self.context, self.node.uuid)
        self.assertEqual(1, len(statements), statements)


class StatisticsTestsMixin(_NodesMixin):

    def test_sums_only_nodes_of_enabled_computes(self):
        first, second, disabled = self._add_hosts(3)
        for node in (first, second):
            compute_node_obj.save_changed(self.context, node,
                                          {'running_vms': 3})
        service = service_obj.Service.get_by_id(self.context,
                                                disabled.service_id)
        service.disabled = True
        service.save()

        stats = compute_node_obj.statistics(self.context)

        self.assertEqual(2, stats['count'])
        self.assertEqual(16, stats['vcpus'])
        self.assertEqual(32768, stats['memory_mb'])
        self.assertEqual(200, stats['local_gb'])
        self.assertEqual(4, stats['vcpus_used'])
        self.assertEqual(6, stats['running_vms'])
        self.assertEqual(160, stats['disk_available_least'])

    def test_forced_down_computes_still_count(self):
        node, = self._add_hosts(1)
        service = service_obj.Service.get_by_id(self.context,
                                                node.service_id)
        service.forced_down = True
        service.save()
        self.assertEqual(1, compute_node_obj.statistics(self.context)['count'])

    def test_nodes_of_deleted_services_do_not_count(self):
        node, kept = self._add_hosts(2)
        db_rows.soft_delete_row(self.engine, models.Service,
                                node.service_id)
        self.assertEqual(1, compute_node_obj.statistics(self.context)['count'])

    def test_no_enabled_compute_gives_zeros(self):
        stats = compute_node_obj.statistics(self.context)
        self.assertEqual({0}, set(stats.values()))
        self.assertIn('free_ram_mb', stats)


class RecordsTestsMixin(_NodesMixin):
    """Summary records agree with full ones on what a summary shows."""

    def setUp(self):
        super().setUp()
        kept, orphaned, self.fenced = self._add_hosts(3)
        db_rows.soft_delete_row(self.engine, models.Service,
                                orphaned.service_id)
        fenced_service = service_obj.Service.get_by_id(
            self.context, self.fenced.service_id)
        fenced_service.record_heartbeat()
        fenced_service.forced_down = True
        fenced_service.save()
        self._add_nodes_of_no_compute()
        db_rows.create_service(self.context, host='legacy')
        db_rows.create_compute_node(self.context, None, host='legacy',
                                    hostname='legacy-node')

    @staticmethod
    def _seen(nodes):
        """What a listing shows of each node; times naive UTC, as records."""
        return [(node.id, node.hypervisor_hostname, node.host,
                 node.service.id, node.service.host, node.service.binary,
                 node.service.forced_down, node.service.disabled,
                 node.service.last_seen_up and
                 timeutils.normalize_time(node.service.last_seen_up))
                for node in nodes]

    def test_summary_records_show_what_full_records_show(self):
        for kwargs in ({}, {'limit': 2},
                       {'limit': 2, 'marker': self.fenced.id},
                       {'hostname_pattern': 'node'}):
            with self.subTest(**kwargs):
                full = compute_node_obj.get_records_with_service(
                    self.context, **kwargs)
                summary = compute_node_obj.get_records_with_service(
                    self.context, summary=True, **kwargs)
                self.assertEqual(self._seen(full), self._seen(summary))
                self.assertEqual([node.uuid for node in full],
                                 [node.uuid for node in summary])
                self.assertEqual({None}, {node.vcpus for node in summary})

    def test_a_node_reads_as_in_a_listing(self):
        listed = compute_node_obj.get_records_with_service(self.context)[-1]
        self.assertEqual(listed, compute_node_obj.get_record(
            self.context, listed.uuid))

    def test_legacy_node_and_forced_down_service_are_listed(self):
        records = compute_node_obj.get_records_with_service(self.context)
        self.assertEqual(['node1', 'node3', 'legacy-node'],
                         _hostnames(records))
        self.assertEqual([False, True, False],
                         [record.service.forced_down for record in records])
        self.assertEqual('legacy', records[-1].service.host)


for _mixin in (ListWithServiceTestsMixin, PagingTestsMixin,
               HostnamePatternTestsMixin, GetRecordTestsMixin,
               StatisticsTestsMixin, RecordsTestsMixin):
    databases.backend_test_cases(_mixin, globals())
