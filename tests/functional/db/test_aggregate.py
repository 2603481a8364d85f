"""Aggregate zone rules on real SQLite, PostgreSQL and MariaDB databases."""

from nova_forcedown import exception
from nova_forcedown.objects import aggregate as aggregate_obj
from tests.fixtures import databases
from tests.fixtures import db_rows


class AggregateTestsMixin:

    def setUp(self):
        super().setUp()
        for host in ('compute1', 'compute2'):
            db_rows.create_service(self.context, host=host)

    def test_host_names_are_compared_exactly(self):
        aggregate = aggregate_obj.create(self.context, 'agg1')
        for add_or_remove in (aggregate_obj.add_host_to,
                              aggregate_obj.remove_host_from):
            self.assertRaises(exception.ComputeHostNotFound, add_or_remove,
                              self.context, aggregate.id, 'COMPUTE1')
        aggregate_obj.add_host_to(self.context, aggregate.id, 'compute1')
        self.assertRaises(exception.ComputeHostNotFound,
                          aggregate_obj.remove_host_from, self.context,
                          aggregate.id, 'Compute1')
        self.assertEqual(['compute1'], aggregate_obj.get_by_id(
            self.context, aggregate.id).hosts)

    def test_a_zone_conflict_names_each_aggregate_once(self):
        zoned = aggregate_obj.create(self.context, 'zoned',
                                     availability_zone='az1')
        plain = aggregate_obj.create(self.context, 'plain')
        for host in ('compute1', 'compute2'):
            aggregate_obj.add_host_to(self.context, zoned.id, host)
            aggregate_obj.add_host_to(self.context, plain.id, host)
        error = self.assertRaises(
            exception.CannotUpdateAggregateMetadata,
            aggregate_obj.set_metadata, self.context,
            aggregate_obj.get_by_id(self.context, plain.id),
            {'availability_zone': 'az2'})
        self.assertIn("availability zone(s) ['az1'].", str(error))

    def test_a_host_with_instances_may_leave_one_aggregate_of_its_zone(self):
        first = aggregate_obj.create(self.context, 'first',
                                     availability_zone='az1')
        second = aggregate_obj.create(self.context, 'second',
                                      availability_zone='az1')
        for aggregate in (first, second):
            aggregate_obj.add_host_to(self.context, aggregate.id, 'compute1')
        db_rows.create_instance(self.context, 'compute1')

        aggregate_obj.remove_host_from(self.context, first.id, 'compute1')

        error = self.assertRaises(exception.CannotRemoveAggregateHost,
                                  aggregate_obj.remove_host_from, self.context,
                                  second.id, 'compute1')
        self.assertIn("would change from 'az1' to 'None'", str(error))

    def test_the_longest_names_and_metadata_the_api_takes_are_kept(self):
        name = '\u00e9' * 255
        # Characters beyond U+FFFF are test_text_on_backends' subject:
        # oslo.db's MariaDB test URL cannot carry them.
        metadata = {'k' * 254 + '\n': '\u2603' * 255,
                    'availability_zone': 'z' * 255}
        aggregate = aggregate_obj.create(self.context, name)
        aggregate_obj.set_metadata(self.context, aggregate, metadata)
        loaded = aggregate_obj.get_by_id(self.context, aggregate.id)
        self.assertEqual((name, metadata), (loaded.name, loaded.metadata))

    def test_metadata_keys_are_compared_without_case_everywhere(self):
        aggregate = aggregate_obj.create(self.context, 'agg1')
        error = self.assertRaises(
            exception.CannotUpdateAggregateMetadata,
            aggregate_obj.set_metadata, self.context, aggregate,
            {'ssd': '1', 'SSD': '2'})
        self.assertIn('the keys SSD and ssd differ only in case', str(error))
        aggregate_obj.set_metadata(self.context, aggregate, {'ssd': '1'})
        aggregate_obj.set_metadata(self.context, aggregate, {'SSD': '2'})
        self.assertEqual({'SSD': '2'}, aggregate_obj.get_by_id(
            self.context, aggregate.id).metadata)

    def test_the_zone_key_in_any_case_is_the_zone(self):
        aggregate = aggregate_obj.create(self.context, 'agg1',
                                         availability_zone='az1')
        aggregate_obj.add_host_to(self.context, aggregate.id, 'compute1')
        db_rows.create_instance(self.context, 'compute1')
        aggregate = aggregate_obj.get_by_id(self.context, aggregate.id)
        # A host with servers may not change zone, whatever the key's case.
        self.assertRaises(exception.CannotUpdateAggregateMetadata,
                          aggregate_obj.set_metadata, self.context,
                          aggregate, {'AVAILABILITY_ZONE': 'az2'})
        empty = aggregate_obj.create(self.context, 'agg2')
        aggregate_obj.set_metadata(self.context, empty,
                                   {'Availability_Zone': 'az3'})
        loaded = aggregate_obj.get_by_id(self.context, empty.id)
        self.assertEqual(('az3', {'availability_zone': 'az3'}),
                         (loaded.availability_zone, loaded.metadata))


databases.backend_test_cases(AggregateTestsMixin, globals())
