"""The servicegroup truth table on the tooz driver, on a real Redis.

With no heartbeat in the backend (an agent still on the db driver, a
backend that restarted empty) or no backend at all, the tooz driver judges
as the db driver does, from the database heartbeat: the unit truth table
runs unchanged on it. A member the backend holds is up whatever its
database heartbeat, until it is forced down or its backend heartbeat is
older than service_down_time.
"""

import datetime
import threading
import time

import fixtures
from oslo_utils import fixture as utils_fixture
from oslotest import base

from nova_forcedown.servicegroup import api as servicegroup
from nova_forcedown.servicegroup import backend_heartbeat
from tests.fixtures import configuration
from tests.fixtures import processes
from tests.fixtures import redis_servers
from tests.unit import test_servicegroup as unit

NOW = unit.NOW


def _tooz_conf(conf, url):
    conf.set_override('servicegroup_driver', 'tooz')
    conf.set_override('backend_url', url, group='coordination')


class TestIsUpToozWithoutBackendHeartbeat(unit.TestIsUp):
    """Nothing in the backend: the database heartbeat judges."""

    def setUp(self):
        super().setUp()
        redis = self.useFixture(redis_servers.RedisNamespace())
        _tooz_conf(self.conf, redis.url)
        self.api = servicegroup.API(self.conf)


class TestIsUpToozBackendUnreachable(unit.TestIsUp):
    """No backend at all: the database heartbeat judges, nothing fails."""

    def setUp(self):
        super().setUp()
        _tooz_conf(self.conf, redis_servers.backend_url(
            processes.free_port(), 'nobody-listens'))
        self.api = servicegroup.API(self.conf)


def _stale_service(host='compute1', forced_down=False):
    """A service whose database heartbeat is an hour old: down on db."""
    service = unit._service(NOW - datetime.timedelta(hours=1),
                            created_at=NOW - datetime.timedelta(days=1),
                            forced_down=forced_down)
    service.host = host
    return service


class TestToozMembership(base.BaseTestCase):

    def setUp(self):
        super().setUp()
        self.conf = self.useFixture(configuration.ConfFixture()).conf
        self.redis = self.useFixture(redis_servers.RedisNamespace())
        _tooz_conf(self.conf, self.redis.url)
        self.useFixture(utils_fixture.TimeFixture(NOW))
        self.useFixture(self._max_age(0))

    @staticmethod
    def _max_age(seconds):
        return fixtures.MonkeyPatch(
            'nova_forcedown.servicegroup.membership.SNAPSHOT_MAX_AGE',
            seconds)

    def _heartbeat(self, *services, clock=None):
        beats = backend_heartbeat.BackendHeartbeat(
            self.conf, services, **({} if clock is None else
                                    {'clock': clock}))
        self.assertTrue(beats.tick())
        return beats

    def test_backend_member_is_up_whatever_its_database_heartbeat(self):
        service = _stale_service()
        api = servicegroup.API(self.conf)
        self.assertFalse(api.service_is_up(service))
        self._heartbeat(service)
        self.assertTrue(api.service_is_up(service))

    def test_forced_down_member_is_down_at_once(self):
        service = _stale_service()
        self._heartbeat(service)
        service.forced_down = True
        api = servicegroup.API(self.conf)
        self.assertFalse(api.service_is_up(service))
        self.assertFalse(api._driver.is_up(service))

    def test_member_is_down_once_its_heartbeat_is_older_than_down_time(self):
        self.conf.set_override('report_interval', 1)
        self.conf.set_override('service_down_time', 2)
        service = _stale_service()
        self._heartbeat(service)
        api = servicegroup.API(self.conf)
        self.assertTrue(api.service_is_up(service))
        self.assertTrue(processes.wait_until(
            lambda: not api.service_is_up(service), timeout=10))

    def test_a_caller_that_reads_often_sees_each_change(self):
        # The API shares one read for a while; the monitor, which looks
        # every few tenths of a second, must see a member gone at once.
        self.useFixture(self._max_age(60))
        service = _stale_service()
        self._heartbeat(service)
        shared = servicegroup.API(self.conf)
        monitor = servicegroup.API(self.conf, reads_every=0.2)
        self.assertEqual([True, True], [shared.service_is_up(service),
                                        monitor.service_is_up(service)])
        self.redis._delete_keys()
        time.sleep(0.15)
        self.assertEqual([True, False], [shared.service_is_up(service),
                                         monitor.service_is_up(service)])

    def test_only_the_services_that_heartbeat_are_members(self):
        beating, silent = _stale_service('c1'), _stale_service('c2')
        other_binary = _stale_service('c1')
        other_binary.binary = 'nova-scheduler'
        self._heartbeat(beating)
        is_up = servicegroup.API(self.conf).liveness()
        self.assertEqual([True, False, False],
                         [is_up(beating), is_up(silent),
                          is_up(other_binary)])

    def test_heartbeat_joins_again_a_backend_that_forgot_everything(self):
        # A check every third tick (database heartbeats every 30 s).
        self.conf.set_override('database_report_interval', 30,
                               group='coordination')
        service = _stale_service()
        beats = self._heartbeat(service)
        api = servicegroup.API(self.conf)
        self.assertTrue(api.service_is_up(service))
        self.redis._delete_keys()
        self.assertFalse(api.service_is_up(service))
        # Two ticks only heartbeat; the third checks and joins again.
        self.assertTrue(beats.tick())
        self.assertTrue(beats.tick())
        self.assertFalse(api.service_is_up(service))
        self.assertTrue(beats.tick())
        self.assertTrue(api.service_is_up(service))

    def test_a_late_tick_joins_again_at_once(self):
        """Readers may have removed members whose heartbeats expired."""
        now = [0.0]
        service = _stale_service()
        beats = self._heartbeat(service, clock=lambda: now[0])
        api = servicegroup.API(self.conf)
        self.redis._delete_keys()
        now[0] += self.conf.service_down_time + 1
        self.assertTrue(beats.tick())
        self.assertTrue(api.service_is_up(service))


class TestToozChecksDoNotWriteTheGroup(base.BaseTestCase):
    """A member still in the group checks it by reading, never rejoins.

    Each write of the group (a join writes it even for a member already
    in it) makes every membership read under way start again: with
    thousands of hosts rejoining, listings got no read that finished.
    """

    def test_checks_leave_the_group_unwritten(self):
        server = self.useFixture(redis_servers.RedisServer())
        conf = self.useFixture(configuration.ConfFixture()).conf
        _tooz_conf(conf, redis_servers.backend_url(server.port, 'checks'))
        conf.set_override('database_report_interval', 10,
                          group='coordination')
        beats = backend_heartbeat.BackendHeartbeat(
            conf, [_stale_service('c%d' % i) for i in range(5)])
        self.assertTrue(beats.tick())
        joined = _group_writes(server)
        # Every tick checks, now: database heartbeats every report_interval.
        for _ in range(3):
            self.assertTrue(beats.tick())
        self.assertEqual(joined, _group_writes(server))
        # The five joins (and the group's creation) were counted.
        self.assertGreaterEqual(joined, 5)


def _group_writes(server):
    """HSET commands the server has run: joins of the group."""
    stats = server.client.info('commandstats')
    return stats.get('cmdstat_hset', {}).get('calls', 0)

    def test_heartbeats_are_sent_without_a_thread_per_host(self):
        before = threading.active_count()
        self._heartbeat(*[_stale_service('c%d' % i) for i in range(20)])
        self.assertEqual(before, threading.active_count())


class TestAnotherBackendByUrl(base.BaseTestCase):
    """Nothing in the driver is Redis's: tooz's file backend, by URL."""

    def setUp(self):
        super().setUp()
        self.conf = self.useFixture(configuration.ConfFixture()).conf
        directory = self.useFixture(fixtures.TempDir()).path
        _tooz_conf(self.conf, 'file://' + directory)
        self.useFixture(utils_fixture.TimeFixture(NOW))

    def test_members_are_up_others_follow_the_database(self):
        beating, silent = _stale_service('c1'), _stale_service('c2')
        forced = _stale_service('c3', forced_down=True)
        beats = backend_heartbeat.BackendHeartbeat(self.conf,
                                                   [beating, forced])
        self.assertTrue(beats.tick())
        is_up = servicegroup.API(self.conf).liveness()
        self.assertEqual([True, False, False],
                         [is_up(beating), is_up(silent), is_up(forced)])
