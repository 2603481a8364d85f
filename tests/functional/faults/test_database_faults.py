"""The database goes away under a running API and agent, then returns.

A TCP proxy on loopback stands between both processes and the database
server (the real server is never stopped). While it is cut, every API
request answers 503 ``serviceUnavailable`` in Nova's JSON within a bounded
time and without a traceback, /healthcheck answers 503, a write changes
nothing and the agent's heartbeats stop. Once it is restored, the API and
the agent recover by themselves; the test measures how fast, and every
write answered 200 is in the database.
"""

from concurrent import futures
import time

import testtools

from tests.fixtures import api_processes
from tests.fixtures import figures
from tests.fixtures import processes
from tests.fixtures import server_database
from tests.fixtures import tcp_proxy

HOSTS = 4
PREFIX = 'fault-'
POOL_TIMEOUT = 3
RECOVERY_LIMIT = 30
# Seconds between an agent's tries of the database at start (oslo.db's
# default is 10): the recovery is watched, not waited out.
RETRY_INTERVAL = 1

DEFAULT_PORTS = {'postgresql': 5432, 'mysql': 3306}


class _DatabaseFaultsMixin:

    BACKEND = None
    # Driver parameters that bound a connection attempt, and that bound.
    CONNECTION_PARAMETERS = None
    DRIVER_TIMEOUT = None

    @property
    def bound(self):
        """Longest acceptable answer while the database is away.

        A request may find its pooled connection dead, then wait for a new
        one: the driver's timeout, plus the pool's, plus slack for 2 cores.
        """
        return self.DRIVER_TIMEOUT + POOL_TIMEOUT + 4

    def setUp(self):
        super().setUp()
        self.database = self.useFixture(
            server_database.ServerDatabase(self.BACKEND))
        self.proxy = self.useFixture(tcp_proxy.TCPProxy(
            self.database.url.port or DEFAULT_PORTS[self.BACKEND]))
        self.deployment = deployment = self.useFixture(
            api_processes.Deployment(
                self.database.url_via(self.proxy.port), workers=2,
                database_extra=(
                    'pool_timeout = %d\nconnection_parameters = %s\n'
                    'retry_interval = %d\n'
                    % (POOL_TIMEOUT, self.CONNECTION_PARAMETERS,
                       RETRY_INTERVAL))))
        self.api = deployment.start_api()
        self.client = self.api.client
        self.client.timeout = self.bound + 5
        self.agent = deployment.start_agent(
            '--driver', 'fake', '--hosts', str(HOSTS), '--host-prefix',
            PREFIX)
        self.assertTrue(processes.wait_until(
            lambda: len(self.heartbeats()) == HOSTS and
            min(self.heartbeats().values()) > 0, timeout=40),
            self.agent.output())
        self.uuids = {host: row['uuid'] for host, row in
                      self.database.services().items()}
        self.requests = 0
        self.unexpected = []

    def heartbeats(self):
        return {host: row['report_count'] for host, row in
                self.database.services().items()}

    def flags(self):
        return {host: (row['forced_down'], row['disabled'],
                       row['disabled_reason'])
                for host, row in self.database.services().items()}

    # ------------------------------------------------------------ requests

    def _send(self, method, path, body=None, version=None):
        self.requests += 1
        return self.client.request(method, path, body=body, version=version)

    def _calls(self):
        """Reads and writes of every kind; the writes would change rows."""
        host1, host2 = PREFIX + '1', PREFIX + '2'
        return [
            ('GET', '/v2.1/os-services', None, '2.53'),
            ('GET', '/v2.1/os-hypervisors/detail', None, '2.88'),
            ('GET', '/v2/os-hypervisors', None, None),
            ('GET', '/v2.1/os-hypervisors/statistics', None, '2.1'),
            ('GET', '/v2.1/os-availability-zone/detail', None, '2.1'),
            ('PUT', '/v2.1/os-services/' + self.uuids[host1],
             {'forced_down': False}, '2.53'),
            ('PUT', '/v2.1/os-services/disable-log-reason',
             {'host': host2, 'binary': 'nova-compute',
              'disabled_reason': 'while the database is away'}, '2.11'),
            ('PUT', '/v2.1/os-services/force-down',
             {'host': host2, 'binary': 'nova-compute',
              'forced_down': True}, '2.11'),
            ('DELETE', '/v2.1/os-services/' + self.uuids[host2], None,
             '2.53'),
        ]

    def _expect_unavailable(self, label):
        """Every call twice, eight at a time, as clients keep trying."""
        calls = self._calls() * 2
        self.requests += len(calls)
        with futures.ThreadPoolExecutor(8) as pool:
            responses = list(pool.map(
                lambda call: self.client.request(*call), calls))
        for (method, path, body, version), resp in zip(calls, responses):
            what = '%s %s %s (%s): %r' % (label, method, path, version, resp)
            if resp.status != 503:
                self.unexpected.append(what)
                continue
            fault = resp.json().get('serviceUnavailable', {})
            if fault.get('code') != 503 or 'Traceback' in resp.text:
                self.unexpected.append('bad fault ' + what)
            if resp.elapsed > self.bound:
                self.unexpected.append('slow ' + what)
        self.requests += 1
        health = processes.http_get(
            'http://127.0.0.1:%d/healthcheck' % self.client.port,
            timeout=self.bound + 5)
        if health[0] != 503:
            self.unexpected.append('%s healthcheck: %r' % (label, health))

    def _time_until(self, predicate, start):
        if not processes.wait_until(predicate, timeout=RECOVERY_LIMIT,
                                    interval=0.1):
            return None
        return round(time.monotonic() - start, 2)

    # ---------------------------------------------------------------- test

    def test_outage_and_recovery(self):
        host1, host2 = PREFIX + '1', PREFIX + '2'
        resp = self._send('PUT', '/v2.1/os-services/' + self.uuids[host1],
                          {'forced_down': True}, '2.53')
        self.assertEqual(200, resp.status, resp)
        acknowledged = self.flags()
        self.assertEqual((True, False, None), acknowledged[host1])

        # The server is gone: open connections reset, new ones refused.
        self.proxy.cut(tcp_proxy.RESET)
        beats_at_cut = self.heartbeats()
        self._expect_unavailable('reset')
        # The network is gone: new connections are never answered.
        self.proxy.cut(tcp_proxy.BLACKHOLE)
        self._expect_unavailable('blackhole')
        self.assertEqual(acknowledged, self.flags(),
                         'a write refused with 503 changed the database')
        self.assertEqual(HOSTS, len(self.database.services()))
        self.assertEqual(beats_at_cut, self.heartbeats())

        self.proxy.restore()
        restored = time.monotonic()
        health_url = 'http://127.0.0.1:%d/healthcheck' % self.client.port
        recovery = {
            'agent': self._time_until(
                lambda: self.heartbeats()[host1] > beats_at_cut[host1],
                restored),
            'healthcheck': self._time_until(
                lambda: processes.http_get(health_url)[0] == 200, restored),
            'api_read': self._time_until(
                lambda: self._send('GET', '/v2.1/os-services').status == 200,
                restored),
        }
        resp = self._send('PUT', '/v2.1/os-services/force-down',
                          {'host': host2, 'binary': 'nova-compute',
                           'forced_down': True}, '2.11')
        self.assertEqual(200, resp.status, resp)
        recovery['api_write'] = round(time.monotonic() - restored, 2)
        self.assertTrue(self.flags()[host2][0], 'a 200 write was lost')
        self.assertEqual(acknowledged[host1], self.flags()[host1])

        figures.record(self, backend=self.BACKEND,
                       requests_sent=self.requests,
                       unexpected_failures=len(self.unexpected),
                       writes_lost=0, recovery_seconds=recovery,
                       proxy_connections=self.proxy.connections_accepted)
        self.assertEqual([], self.unexpected, '\n'.join(self.unexpected))
        self.assertNotIn(None, recovery.values(), recovery)
        self.assertNotIn('Traceback', self.api.output())
        self.assertNotIn('Unexpected', self.api.output())
        self.assertIn('Recovered', self.agent.output())

    def test_an_agent_started_during_the_outage_waits_for_the_database(self):
        # A fenced host powered on while the database is away.
        self.proxy.cut(tcp_proxy.RESET)
        late = self.deployment.start_agent(
            '--driver', 'fake', '--hosts', '1', '--host-prefix', 'late-')
        self.assertTrue(processes.wait_until(
            lambda: 'the database is unavailable' in late.output(),
            timeout=RECOVERY_LIMIT), late.output())
        self.assertFalse(processes.wait_until(
            lambda: late.process.poll() is not None, timeout=3),
            late.output())

        self.proxy.restore()
        self.assertTrue(processes.wait_until(
            lambda: self.heartbeats().get('late-1', 0) > 0,
            timeout=RECOVERY_LIMIT), late.output())
        self.assertNotIn('Traceback', late.output())


class TestDatabaseFaultsPostgreSQL(_DatabaseFaultsMixin, testtools.TestCase):
    BACKEND = 'postgresql'
    # libpq's connect_timeout covers the whole start-up exchange.
    CONNECTION_PARAMETERS = 'connect_timeout=2'
    DRIVER_TIMEOUT = 2


class TestDatabaseFaultsMySQL(_DatabaseFaultsMixin, testtools.TestCase):
    BACKEND = 'mysql'
    # PyMySQL's connect_timeout covers only the TCP connect: a server that
    # accepts and never greets needs read_timeout as well.
    CONNECTION_PARAMETERS = 'connect_timeout=2&read_timeout=5&write_timeout=5'
    DRIVER_TIMEOUT = 5
