"""On the tooz driver, a listing asks the backend the same few commands
at 10 hosts and at 50, and runs the same SQL as on the db driver.

A private redis-server counts the commands (INFO commandstats) each
listing of services, hypervisors, zones and servers costs through the
real WSGI app, every host heartbeating as a member; the membership
snapshot is not reused across requests here (its max age is 0), so each
listing pays its own read. tooz's Redis driver reads the whole group in
one transaction (WATCH, EXISTS, HKEYS, one MGET of every member's
heartbeat key), so the count does not grow with the hosts.
"""

import fixtures
import sqlalchemy as sa
import webob

from nova_forcedown.api import deploy
from nova_forcedown.db import models
from nova_forcedown.servicegroup import backend_heartbeat
from tests.fixtures import configuration
from tests.fixtures import databases
from tests.fixtures import redis_servers
from tests.fixtures import sql_statements
from tests.functional.db import test_statement_counts as counts

# Commands of one read of the group, and the INFO that counts them.
MAX_COMMANDS = 8


class TestToozListingRoundTrips(databases.DbTestCase):

    def setUp(self):
        super().setUp()
        self.redis = self.useFixture(redis_servers.RedisServer())
        self.conf = self.useFixture(configuration.ConfFixture(
            api__auth_strategy='noauth2', servicegroup_driver='tooz',
            coordination__backend_url=redis_servers.backend_url(
                self.redis.port, 'round-trips'))).conf
        self.useFixture(fixtures.MonkeyPatch(
            'nova_forcedown.servicegroup.membership.SNAPSHOT_MAX_AGE', 0))
        # A read slower than READ_TIMEOUT (a loaded machine) would answer
        # "unknown" and finish during the next listing, whose commands it
        # would then add to: the counts are this test's subject, not the
        # timeout.
        self.useFixture(fixtures.MonkeyPatch(
            'nova_forcedown.servicegroup.membership.READ_TIMEOUT', 60.0))
        self.app = deploy.load_app(self.conf)

    def _join_every_host(self):
        with self.engine.connect() as connection:
            rows = connection.execute(sa.select(models.Service)).all()
        beats = backend_heartbeat.BackendHeartbeat(self.conf, rows)
        self.assertTrue(beats.tick())

    def _listings(self):
        marker = 3
        for path, version in counts.LISTINGS:
            if '%(marker' in path:
                continue
            yield path, version
        for path, version, _ in counts.SERVER_LISTINGS:
            if '%(server)s' not in path:
                yield path, version
        yield '/os-hypervisors/%d' % marker, '2.1'

    def _costs(self):
        costs = {}
        for path, version in self._listings():
            request = webob.Request.blank('/v2.1' + path, headers={
                'X-Auth-Token': counts.ADMIN_TOKEN,
                'OpenStack-API-Version': 'compute ' + version})
            before = self.redis.commands()
            with sql_statements.recorded_statements(self.engine) as statements:
                response = request.get_response(self.app)
            commands = self.redis.commands() - before
            self.assertEqual(200, response.status_int,
                             '%s at %s: %s' % (path, version, response.body))
            costs[(path, version)] = (commands, len(statements))
        return costs

    def test_backend_commands_and_sql_do_not_grow_with_hosts(self):
        counts.add_hosts(self.engine, 1, 10)
        self._join_every_host()
        self._costs()   # the API's first read also connects: not counted
        small = self._costs()
        counts.add_hosts(self.engine, 11, 50)
        self._join_every_host()
        large = self._costs()
        self.assertEqual(small, large)
        too_many = {listing: cost for listing, cost in large.items()
                    if cost[0] > MAX_COMMANDS}
        self.assertEqual({}, too_many)
        # The listings that judge liveness did read the backend.
        self.assertGreater(large[('/os-services', '2.1')][0], 1)

    def test_sql_is_the_db_drivers(self):
        counts.add_hosts(self.engine, 1, 10)
        self._join_every_host()
        tooz_costs = self._costs()
        self.conf.set_override('servicegroup_driver', 'db')
        self.app = deploy.load_app(self.conf)
        db_costs = self._costs()
        self.assertEqual({listing: cost[1] for listing, cost in
                          tooz_costs.items()},
                         {listing: cost[1] for listing, cost in
                          db_costs.items()})
