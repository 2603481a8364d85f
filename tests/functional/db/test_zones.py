"""Aggregates and the zones they make, on SQLite, PostgreSQL and MariaDB."""

import threading

import fixtures
from oslo_serialization import jsonutils
import sqlalchemy as sa
import webob

from nova_forcedown.api import deploy
from nova_forcedown import context as nova_context
from nova_forcedown.db import aggregates as db_aggregates
from nova_forcedown.db import engine as db_engine
from nova_forcedown.db import models
from nova_forcedown import exception
from nova_forcedown.objects import aggregate as aggregate_obj
from nova_forcedown.objects import host_zones
from nova_forcedown.objects import instance as instance_obj
from tests.fixtures import configuration
from tests.fixtures import databases
from tests.fixtures import db_rows
from tests.fixtures import sql_statements


class ZonesMixin:

    def setUp(self):
        super().setUp()
        for host in ('compute1', 'compute2', 'compute3'):
            db_rows.create_service(self.context, host=host)
        db_rows.create_service(self.context, host='controller',
                               binary='nova-scheduler')

    def _zone_aggregate(self, name, zone, *hosts):
        aggregate = aggregate_obj.create(self.context, name,
                                         availability_zone=zone)
        for host in hosts:
            aggregate = aggregate_obj.add_host_to(self.context, aggregate.id,
                                                  host)
        return aggregate

    def test_a_host_is_in_the_zone_of_its_aggregates(self):
        self._zone_aggregate('rack1', 'az1', 'compute1')
        aggregate_obj.add_host_to(self.context, aggregate_obj.create(
            self.context, 'gpus').id, 'compute2')
        self.assertEqual({'compute1': 'az1'},
                         host_zones.zones_by_host(self.context))

    def test_a_host_in_two_zones_is_refused_and_not_added(self):
        self._zone_aggregate('rack1', 'az1', 'compute1')
        other = self._zone_aggregate('rack2', 'az2')
        error = self.assertRaises(exception.CannotAddAggregateHost,
                                  aggregate_obj.add_host_to, self.context,
                                  other.id, 'compute1')
        self.assertIn("already in availability zone(s) ['az1']", str(error))
        self.assertEqual([], aggregate_obj.get_by_id(self.context,
                                                     other.id).hosts)

    def test_a_host_put_in_two_zones_by_hand_shows_both(self):
        # As an aggregate made before the rule, or a row written by hand:
        # Nova shows the zones joined by commas.
        self._zone_aggregate('rack1', 'az1', 'compute1', 'compute2')
        other = self._zone_aggregate('rack2', 'az2', 'compute3')
        with db_engine.context_manager.writer.using(self.context) as session:
            session.execute(sa.insert(models.AggregateHost.__table__).values(
                host='compute1', aggregate_id=other.id))
        self.assertEqual(
            {'compute1': 'az1,az2', 'compute2': 'az1', 'compute3': 'az2'},
            host_zones.zones_by_host(self.context))

    def test_a_zone_does_not_change_under_instances(self):
        instance_obj.create(self.context, host='compute1', node='compute1')
        aggregate = self._zone_aggregate('rack1', 'az1', 'compute2')
        aggregate = aggregate_obj.add_host_to(self.context, aggregate.id,
                                              'compute3')
        self.assertRaises(exception.CannotAddAggregateHost,
                          aggregate_obj.add_host_to, self.context,
                          aggregate.id, 'compute1')
        rename = aggregate_obj.update(
            self.context, aggregate_obj.get_by_id(self.context, aggregate.id),
            name='rack-one', availability_zone='az1')
        self.assertEqual('rack-one', rename.name)

    def test_an_empty_zone_name_is_refused_and_nothing_written(self):
        aggregate = self._zone_aggregate('rack1', 'az1', 'compute1')
        self.assertRaises(exception.CannotUpdateAggregate,
                          aggregate_obj.update, self.context, aggregate,
                          name='renamed', availability_zone='')
        self.assertEqual(('rack1', 'az1'), (
            aggregate_obj.get_by_id(self.context, aggregate.id).name,
            aggregate_obj.get_by_id(self.context,
                                    aggregate.id).availability_zone))

    def test_agent_placement_makes_the_zone_once(self):
        for _ in range(2):
            aggregate_obj.place_hosts_in_zone(self.context,
                                              ['compute1', 'compute2'], 'az1')
        aggregates = aggregate_obj.get_all(self.context)
        self.assertEqual([('az1', ['compute1', 'compute2'], 'az1')],
                         [(aggregate.name, aggregate.hosts,
                           aggregate.availability_zone)
                          for aggregate in aggregates])

    def test_services_listing_shows_the_zones(self):
        self._zone_aggregate('rack1', 'az1', 'compute1')
        conf = self.useFixture(configuration.ConfFixture(
            api__auth_strategy='noauth2')).conf
        response = webob.Request.blank(
            '/v2.1/os-services', headers={'X-Auth-Token': 'admin:admin'}
        ).get_response(deploy.load_app(conf))
        zones = {service['host']: service['zone'] for service in
                 jsonutils.loads(response.body)['services']}
        self.assertEqual({'compute1': 'az1', 'compute2': 'nova',
                          'compute3': 'nova', 'controller': 'internal'},
                         zones)

    def _services(self, app, query=''):
        request = webob.Request.blank(
            '/v2.1/os-services' + query, headers={
                'X-Auth-Token': 'admin:admin',
                'OpenStack-API-Version': 'compute 2.53'})
        with sql_statements.recorded_statements(
                db_engine.get_engine()) as statements:
            response = request.get_response(app)
        self.assertEqual(200, response.status_int, response.body)
        return jsonutils.loads(response.body)['services'], statements

    def test_one_hosts_listing_is_one_statement_and_the_same_rows(self):
        self._zone_aggregate('rack1', 'az1', 'compute1', 'compute2')
        self._zone_aggregate('rack1b', 'az1', 'compute1')
        other = self._zone_aggregate('rack2', 'az2')
        with db_engine.context_manager.writer.using(self.context) as session:
            session.execute(sa.insert(models.AggregateHost.__table__).values(
                host='compute2', aggregate_id=other.id))
        db_rows.create_service(self.context, host='compute2',
                               binary='nova-scheduler')
        conf = self.useFixture(configuration.ConfFixture(
            api__auth_strategy='noauth2')).conf
        app = deploy.load_app(conf)
        everything, _ = self._services(app)
        for host, zones in (('compute1', ['az1']),
                            ('compute2', ['az1,az2', 'internal']),
                            ('compute3', ['nova']),
                            ('controller', ['internal']),
                            ('nowhere', [])):
            listed, statements = self._services(app, '?host=' + host)
            self.assertEqual([service for service in everything
                              if service['host'] == host], listed, host)
            self.assertEqual(zones, [service['zone'] for service in listed])
            self.assertEqual(1, len(statements), host)
        listed, _ = self._services(
            app, '?host=compute2&binary=nova-scheduler')
        self.assertEqual(['internal'], [service['zone']
                                        for service in listed])


class ConcurrentZonesMixin:
    """Agents at the same moment, on PostgreSQL and MariaDB.

    SQLite's in-memory test database is one connection, which two
    threads cannot use at once.
    """

    def setUp(self):
        super().setUp()
        for host in ('compute1', 'compute2'):
            db_rows.create_service(self.context, host=host)

    def test_agents_started_together_make_the_zone_once(self):
        # Both agents look for the zone's aggregate before either makes
        # it, as two agents started at the same moment can.
        both_looked = threading.Barrier(2)
        look = db_aggregates.aggregate_get_by_zone

        def look_together(context, zone):
            found = look(context, zone)
            if not found:
                both_looked.wait(10)
            return found

        self.useFixture(fixtures.MockPatchObject(
            db_aggregates, 'aggregate_get_by_zone',
            side_effect=look_together))
        failures = []

        def agent(host):
            try:
                aggregate_obj.place_hosts_in_zone(
                    nova_context.get_admin_context(), [host], 'az1')
            except Exception as error:  # reported below
                failures.append(error)

        agents = [threading.Thread(target=agent, args=(host,))
                  for host in ('compute1', 'compute2')]
        for thread in agents:
            thread.start()
        for thread in agents:
            thread.join(30)

        self.assertEqual([], failures)
        self.assertEqual([('az1', ['compute1', 'compute2'], 'az1')],
                         [(aggregate.name, sorted(aggregate.hosts),
                           aggregate.availability_zone)
                          for aggregate in aggregate_obj.get_all(
                              self.context)])


databases.backend_test_cases(ZonesMixin, globals())
databases.backend_test_cases(ConcurrentZonesMixin, globals(),
                             databases.MIGRATED_FIXTURES[1:])
