"""Both servicegroup drivers heartbeat a real service row on SQLite."""

import time

from nova_forcedown.objects import service as service_obj
from nova_forcedown.servicegroup import api as servicegroup
from nova_forcedown.servicegroup import membership
from tests.fixtures import configuration
from tests.fixtures import databases
from tests.fixtures import db_rows
from tests.fixtures import redis_servers

# Longest a test waits for the heartbeat thread; it normally takes
# milliseconds, as the first heartbeat is sent at once.
DEADLINE = 10


def _wait_for(condition):
    """Poll ``condition`` every few milliseconds until true or DEADLINE."""
    give_up_at = time.monotonic() + DEADLINE
    while not condition():
        if time.monotonic() > give_up_at:
            return False
        time.sleep(0.01)
    return True


class TestDbDriverJoin(databases.DbTestCase):

    def setUp(self):
        super().setUp()
        self.conf = self.useFixture(configuration.ConfFixture()).conf
        self.api = servicegroup.API(self.conf)

    def _join(self, service):
        handle = self.api.join(service)
        self.addCleanup(handle.stop, DEADLINE)
        return handle

    def test_join_heartbeats_the_service(self):
        service = db_rows.create_service(self.context)
        self.assertIsNone(service.last_seen_up)

        handle = self._join(service)
        # Read only the agent's own copy while its thread runs: it holds
        # what the heartbeat stored. The database is read once it stopped.
        self.assertTrue(_wait_for(lambda: service.report_count >= 1))
        handle.stop(DEADLINE)

        stored = service_obj.Service.get_by_id(self.context, service.id)
        self.assertGreaterEqual(stored.report_count, 1)
        self.assertEqual(service.report_count, stored.report_count)
        self.assertIsNotNone(stored.last_seen_up)
        self.assertTrue(self.api.service_is_up(stored))

    def test_forced_down_service_heartbeats_but_stays_down(self):
        service = db_rows.create_service(self.context, forced_down=True)

        handle = self._join(service)
        self.assertTrue(_wait_for(lambda: service.report_count >= 1))
        handle.stop(DEADLINE)

        stored = service_obj.Service.get_by_id(self.context, service.id)
        self.assertTrue(stored.forced_down)
        self.assertIsNotNone(stored.last_seen_up)
        self.assertFalse(self.api.service_is_up(stored))


class TestToozDriverJoin(TestDbDriverJoin):
    """The same, on the tooz driver: backend and database heartbeats."""

    def setUp(self):
        super().setUp()
        redis = self.useFixture(redis_servers.RedisNamespace())
        self.conf.set_override('servicegroup_driver', 'tooz')
        self.conf.set_override('backend_url', redis.url,
                               group='coordination')
        self.api = servicegroup.API(self.conf)

    def test_joined_service_is_a_member_of_the_backend(self):
        service = db_rows.create_service(self.context)
        self._join(service)
        self.assertTrue(_wait_for(
            lambda: membership.member_id(service) in
            (self.api._driver.members() or ())))
