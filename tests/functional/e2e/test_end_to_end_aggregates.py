"""End to end: aggregates and availability zones through the real API
server, with python-novaclient and openstacksdk as an operator uses them."""

from novaclient import exceptions as nova_exceptions
import openstack

from tests.fixtures import commands
from tests.functional.e2e import test_end_to_end

HOST = test_end_to_end.HOST


class TestAggregatesWithNovaclient(test_end_to_end.EndToEndTestCase):

    def test_zone_from_an_aggregate_shows_everywhere(self):
        self.start_agent('--driver', 'local', '--host', HOST)
        nova = self.nova('2.53')

        aggregate = nova.aggregates.create('agg1', 'az1')
        aggregate = nova.aggregates.add_host(aggregate, HOST)
        self.assertEqual(([HOST], 'az1'),
                         (aggregate.hosts, aggregate.availability_zone))
        aggregate = nova.aggregates.set_metadata(aggregate, {'ssd': 'true'})
        self.assertEqual({'availability_zone': 'az1', 'ssd': 'true'},
                         aggregate.metadata)

        self.assertEqual('az1', self.service_state(nova).zone)
        zones = {zone.zoneName: zone for zone in
                 nova.availability_zones.list(detailed=True)}
        self.assertTrue(zones['az1'].zoneState['available'])
        self.assertEqual({'nova-compute'},
                         set(zones['az1'].hosts[HOST]))

        nova.aggregates.remove_host(aggregate, HOST)
        self.assertEqual('nova', self.service_state(nova).zone)
        nova.aggregates.delete(aggregate)
        self.assertEqual([], nova.aggregates.list())

    def test_a_host_in_a_second_zone_is_a_conflict(self):
        self.start_agent('--driver', 'local', '--host', HOST,
                         '--availability-zone', 'az1')
        nova = self.nova('2.53')
        # The agent registers its service, puts its host in the zone, and
        # only then heartbeats.
        self.assertTrue(commands.wait_until(lambda: self.report_count() > 0))
        (placed,) = nova.aggregates.list()
        self.assertEqual(('az1', [HOST]), (placed.name, placed.hosts))
        other = nova.aggregates.create('agg2', 'az2')
        error = self.assertRaises(nova_exceptions.Conflict,
                                  nova.aggregates.add_host, other, HOST)
        self.assertEqual(409, error.code)
        self.assertIn("already in availability zone(s) ['az1']",
                      str(error))


class TestAggregatesWithOpenStackSDK(test_end_to_end.EndToEndTestCase):

    def test_aggregates_zones_and_hypervisor_aggregates(self):
        self.start_agent('--driver', 'local', '--host', HOST)
        conn = openstack.connection.Connection(session=self.session,
                                               compute_api_version='2')
        aggregate = conn.compute.create_aggregate(name='agg1',
                                                  availability_zone='az1')
        conn.compute.add_host_to_aggregate(aggregate, HOST)

        (listed,) = conn.compute.aggregates()
        self.assertEqual(('agg1', [HOST], 'az1'),
                         (listed.name, listed.hosts,
                          listed.availability_zone))
        self.assertTrue(listed.uuid)
        zones = {zone.name: zone for zone in
                 conn.compute.availability_zones(details=True)}
        self.assertTrue(zones['az1'].state['available'])
        self.assertIn(HOST, zones['az1'].hosts)
        # What `openstack hypervisor show` does: the node, then the
        # aggregates that hold its service's host.
        hypervisor = conn.compute.find_hypervisor(HOST, ignore_missing=False)
        hypervisor = conn.compute.get_hypervisor(hypervisor.id)
        self.assertEqual(['agg1'], [
            found.name for found in conn.compute.aggregates()
            if hypervisor.service_details['host'] in found.hosts])
