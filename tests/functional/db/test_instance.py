"""Instances by host on SQLite, PostgreSQL and MariaDB."""

from nova_forcedown.db import models
from nova_forcedown.objects import instance as instance_obj
from tests.fixtures import databases
from tests.fixtures import db_rows
from tests.fixtures import sql_statements


class InstancesOnHostsTestsMixin:

    def setUp(self):
        super().setUp()
        for host, name in (('compute1', 'web1'), ('compute2', 'db1'),
                           ('compute1', 'web2'), ('compute3', 'cache1')):
            db_rows.create_instance(self.context, host, name=name)
        gone = db_rows.create_instance(self.context, 'compute1',
                                       name='deleted')
        db_rows.soft_delete_row(self.engine, models.Instance, gone.id)

    def _names(self, instances):
        return [instance.display_name for instance in instances]

    def test_live_instances_of_the_given_hosts(self):
        instances = instance_obj.get_by_hosts(self.context,
                                              ['compute1', 'compute2'])
        self.assertEqual(['web1', 'db1', 'web2'], self._names(instances))
        self.assertEqual({'compute1', 'compute2'},
                         {instance.host for instance in instances})

    def test_one_statement_for_many_hosts(self):
        hosts = ['compute%d' % number for number in range(1, 40)]
        with sql_statements.recorded_statements(self.engine) as statements:
            instances = instance_obj.get_by_hosts(self.context, hosts)
        self.assertEqual(4, len(instances))
        self.assertEqual(1, len(statements), statements)

    def test_no_hosts_means_no_instances_and_no_sql(self):
        with sql_statements.recorded_statements(self.engine) as statements:
            self.assertEqual([], self._names(
                instance_obj.get_by_hosts(self.context, [])))
        self.assertEqual([], statements)

    def test_unknown_host_gives_an_empty_list(self):
        self.assertEqual([], self._names(
            instance_obj.get_by_hosts(self.context, ['elsewhere'])))

    def test_by_one_host(self):
        self.assertEqual(['web1', 'web2'], self._names(
            instance_obj.get_by_host(self.context, 'compute1')))


databases.backend_test_cases(InstancesOnHostsTestsMixin, globals())
