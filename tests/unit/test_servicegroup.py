"""Liveness truth table of the servicegroup, on a controlled clock."""

import datetime

from oslo_utils import fixture as utils_fixture
from oslotest import base

from nova_forcedown.objects import service as service_obj
from nova_forcedown.servicegroup import api as servicegroup
from nova_forcedown.servicegroup import host_status
from nova_forcedown.servicegroup import zones
from tests.fixtures import configuration

NOW = datetime.datetime(2026, 11, 30, 12, 0, 0)


def _service(last_seen_up=None, created_at=NOW, forced_down=False):
    return service_obj.Service(
        host='compute1', binary='nova-compute', forced_down=forced_down,
        last_seen_up=last_seen_up, created_at=created_at)


class TestIsUp(base.BaseTestCase):

    def setUp(self):
        super().setUp()
        self.conf = self.useFixture(configuration.ConfFixture()).conf
        self.api = servicegroup.API(self.conf)
        self.useFixture(utils_fixture.TimeFixture(NOW))

    def _ago(self, seconds):
        return NOW - datetime.timedelta(seconds=seconds)

    def test_fresh_heartbeat_is_up(self):
        self.assertTrue(self.api.service_is_up(_service(self._ago(5))))

    def test_heartbeat_older_than_down_time_is_down(self):
        self.assertFalse(self.api.service_is_up(_service(self._ago(61))))

    def test_heartbeat_exactly_at_the_boundary_is_up(self):
        self.assertTrue(self.api.service_is_up(_service(self._ago(60))))

    def test_future_heartbeat_within_the_window_is_up(self):
        self.assertTrue(self.api.service_is_up(_service(self._ago(-30))))

    def test_future_heartbeat_beyond_the_window_is_down(self):
        self.assertFalse(self.api.service_is_up(_service(self._ago(-61))))

    def test_never_reported_counts_from_creation(self):
        self.assertTrue(self.api.service_is_up(
            _service(None, created_at=self._ago(59))))
        self.assertFalse(self.api.service_is_up(
            _service(None, created_at=self._ago(61))))

    def test_forced_down_is_down_whatever_the_heartbeat(self):
        for age in (0, 5, 60, -30):
            self.assertFalse(self.api.service_is_up(
                _service(self._ago(age), forced_down=True)))

    def test_db_driver_itself_honours_forced_down(self):
        driver = self.api._driver
        self.assertFalse(driver.is_up(_service(NOW, forced_down=True)))
        self.assertTrue(driver.is_up(_service(NOW)))

    def test_down_time_follows_configuration(self):
        self.conf.set_override('service_down_time', 120)
        api = servicegroup.API(self.conf)
        self.assertTrue(api.service_is_up(_service(self._ago(100))))

    def test_timezone_aware_heartbeats_are_compared_in_utc(self):
        service = _service(self._ago(10))
        # Versioned objects hand back aware datetimes; they must compare.
        self.assertIsNotNone(service.last_seen_up.tzinfo)
        self.assertTrue(self.api.service_is_up(service))

    def test_up_of_keeps_only_the_live_services_in_order(self):
        fresh, stale, forced, recent = (
            _service(self._ago(5)), _service(self._ago(61)),
            _service(self._ago(5), forced_down=True), _service(self._ago(30)))
        self.assertEqual([fresh, recent],
                         self.api.up_of([fresh, stale, forced, recent]))


class TestServiceZones(base.BaseTestCase):
    """The zone a listing shows, the API and the manage command alike."""

    def setUp(self):
        super().setUp()
        conf = self.useFixture(configuration.ConfFixture()).conf
        conf.set_override('default_availability_zone', 'nova-default')
        conf.set_override('internal_service_availability_zone', 'inside')
        self.zones = zones.ServiceZones(conf, {'compute1': 'az1',
                                               'controller': 'az2'})

    def _zone(self, topic, host):
        return self.zones.zone(service_obj.Service(topic=topic, host=host))

    def test_compute_is_in_the_zone_of_its_hosts_aggregates(self):
        self.assertEqual('az1', self._zone('compute', 'compute1'))

    def test_compute_in_no_zone_is_in_the_default_zone(self):
        self.assertEqual('nova-default', self._zone('compute', 'compute2'))

    def test_other_services_are_internal_whatever_their_host(self):
        self.assertEqual('inside', self._zone('scheduler', 'controller'))
        self.assertEqual('inside', self._zone(None, 'compute1'))


class TestAvailabilityZones(base.BaseTestCase):
    """Which zones a listing shows, and which services each holds."""

    def setUp(self):
        super().setUp()
        conf = self.useFixture(configuration.ConfFixture()).conf
        self.zones = zones.ServiceZones(conf, {'c1': 'az1', 'c2': 'az1',
                                               'c3': 'az2', 'c9': 'az9'})

    @staticmethod
    def _service(host, binary='nova-compute', disabled=False):
        topic = {'nova-compute': 'compute', 'nova-scheduler': 'scheduler'}
        return service_obj.Service(host=host, binary=binary,
                                   topic=topic.get(binary),
                                   disabled=disabled)

    def _listing(self, *services, is_up=None):
        return {zone.name: zone for zone in
                self.zones.availability_zones(services, is_up)}

    def test_available_zones_by_name_then_the_others(self):
        listed = self.zones.availability_zones([
            self._service('c3', disabled=True), self._service('c5'),
            self._service('c2'), self._service('ctl', 'nova-scheduler')])
        self.assertEqual([('az1', True), ('internal', True), ('nova', True),
                          ('az2', False)],
                         [(zone.name, zone.available) for zone in listed])
        self.assertEqual(['internal'],
                         [zone.name for zone in listed if zone.internal])

    def test_one_enabled_service_makes_a_zone_available(self):
        listed = self._listing(self._service('c1', disabled=True),
                               self._service('c2'))
        self.assertTrue(listed['az1'].available)
        self.assertEqual(['c2'], list(listed['az1'].hosts))

    def test_unavailable_zone_has_no_hosts(self):
        listed = self._listing(self._service('c3', disabled=True))
        self.assertEqual((False, None),
                         (listed['az2'].available, listed['az2'].hosts))

    def test_a_zone_without_services_is_not_listed(self):
        self.assertNotIn('az9', self._listing(self._service('c1')))

    def test_host_tree_holds_liveness_and_leaves_api_binaries_out(self):
        listed = self._listing(
            self._service('ctl', 'nova-scheduler'),
            self._service('ctl', 'nova-osapi_compute'),
            self._service('ctl', 'nova-conductor'),
            self._service('c1'),
            is_up=lambda service: service.binary != 'nova-conductor')
        tree = {host: [(entry.service.binary, entry.is_up)
                       for entry in entries]
                for host, entries in listed['internal'].hosts.items()}
        self.assertEqual({'ctl': [('nova-conductor', False),
                                  ('nova-scheduler', True)]}, tree)
        self.assertEqual([True], [entry.is_up for entry in
                                  listed['az1'].hosts['c1']])

    def test_only_api_services_still_make_the_internal_zone_available(self):
        listed = self._listing(self._service('ctl', 'nova-metadata'))
        self.assertEqual((True, {}), (listed['internal'].available,
                                      listed['internal'].hosts))

    def test_liveness_is_not_asked_for_a_summary(self):
        listed = self._listing(self._service('c1'))
        self.assertIsNone(listed['az1'].hosts['c1'][0].is_up)


class TestHostStatus(base.BaseTestCase):
    """host_status of a server, first rule that matches."""

    def _status(self, service, up=True):
        return host_status.host_status(service, lambda service: up)

    def test_no_compute_service_is_empty(self):
        self.assertEqual('', self._status(None))

    def test_forced_down_is_down_even_if_disabled_and_heartbeating(self):
        service = _service(NOW, forced_down=True)
        service.disabled = True
        self.assertEqual('DOWN', self._status(service, up=True))

    def test_disabled_is_maintenance_up_or_not(self):
        service = _service(NOW)
        service.disabled = True
        self.assertEqual('MAINTENANCE', self._status(service, up=True))
        self.assertEqual('MAINTENANCE', self._status(service, up=False))

    def test_enabled_and_up_is_up(self):
        service = _service(NOW)
        service.disabled = False
        self.assertEqual('UP', self._status(service, up=True))

    def test_stale_heartbeat_not_forced_is_unknown(self):
        service = _service(NOW)
        service.disabled = False
        self.assertEqual('UNKNOWN', self._status(service, up=False))
