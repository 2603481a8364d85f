"""Many clients write while an agent heartbeats 500 hosts, on PostgreSQL.

The API runs under gunicorn with 4 workers; 16 client threads force
services down and up and enable and disable them, through the 2.53 UUID
API and the 2.11 legacy actions, while one fake-driver agent heartbeats 500
hosts every REPORT_INTERVAL seconds. Writes to one service are serialised
in the client (a lock per service), so "the last acknowledged write" of
each service is well defined. Afterwards every service's forced_down,
disabled and disabled_reason equal it, in the database and in the API; no
heartbeat cleared a flag; no request failed; report_count only grew.
"""

import random
import threading
import time

import testtools

from tests.fixtures import api_processes
from tests.fixtures import figures
from tests.fixtures import processes
from tests.fixtures import server_database

HOSTS = 500
PREFIX = 'conc-'
REPORT_INTERVAL = 2
CLIENTS = 16
# The services the clients write to; the other hosts only heartbeat.
WRITTEN_HOSTS = 48
# Each client stops at whichever comes first.
DURATION = 25
MAX_REQUESTS_PER_CLIENT = 400
SEED = 20240601

ENABLED = (False, None)


class ServiceModel:
    """The last acknowledged flags of one service, and its lock."""

    def __init__(self, host, uuid):
        self.host = host
        self.uuid = uuid
        self.lock = threading.Lock()
        self.forced_down = False
        self.disabled = False
        self.disabled_reason = None
        self.writes = 0

    @property
    def flags(self):
        return (self.forced_down, self.disabled, self.disabled_reason)


def _operations(service, rng):
    """One random write: (method, path, body, version, apply on 200)."""
    compute = {'host': service.host, 'binary': 'nova-compute'}
    reason = 'reason-%d' % rng.randrange(10 ** 6)
    forced = rng.random() < 0.5

    def set_(**flags):
        def apply():
            for name, value in flags.items():
                setattr(service, name, value)
        return apply

    uuid_path = '/v2.1/os-services/' + service.uuid
    return rng.choice([
        ('PUT', uuid_path, {'forced_down': forced}, '2.53',
         set_(forced_down=forced)),
        ('PUT', uuid_path, {'status': 'disabled', 'disabled_reason': reason},
         '2.53', set_(disabled=True, disabled_reason=reason)),
        ('PUT', uuid_path, {'status': 'disabled'}, '2.53',
         set_(disabled=True, disabled_reason=None)),
        ('PUT', uuid_path, {'status': 'enabled'}, '2.53',
         set_(disabled=False, disabled_reason=None)),
        ('PUT', uuid_path, {'status': 'enabled', 'forced_down': forced},
         '2.53', set_(disabled=False, disabled_reason=None,
                      forced_down=forced)),
        ('PUT', '/v2.1/os-services/force-down',
         dict(compute, forced_down=forced), '2.11',
         set_(forced_down=forced)),
        ('PUT', '/v2.1/os-services/disable-log-reason',
         dict(compute, disabled_reason=reason), '2.11',
         set_(disabled=True, disabled_reason=reason)),
        ('PUT', '/v2.1/os-services/disable', compute, '2.11',
         set_(disabled=True, disabled_reason=None)),
        ('PUT', '/v2.1/os-services/enable', compute, '2.11',
         set_(disabled=False, disabled_reason=None)),
    ])


class TestConcurrentWritesAndHeartbeats(testtools.TestCase):

    def setUp(self):
        super().setUp()
        self.database = self.useFixture(
            server_database.ServerDatabase('postgresql'))
        deployment = self.useFixture(api_processes.Deployment(
            self.database.url_text, workers=4, threads=4,
            report_interval=REPORT_INTERVAL, service_down_time=120))
        self.agent = deployment.start_agent(
            '--driver', 'fake', '--hosts', str(HOSTS), '--host-prefix',
            PREFIX)
        self.api = deployment.start_api()
        self.assertTrue(processes.wait_until(
            lambda: self._all_heartbeating(), timeout=90),
            self.agent.output()[-2000:])

    def _all_heartbeating(self):
        rows = self.database.services()
        return (len(rows) == HOSTS and
                min(row['report_count'] for row in rows.values()) > 0)

    def report_counts(self):
        return {host: row['report_count']
                for host, row in self.database.services().items()}

    # --------------------------------------------------------------- load

    def _client(self, index, models, deadline, results):
        rng = random.Random(SEED + index)
        client = api_processes.Client(self.api.client.port, timeout=30)
        for _ in range(MAX_REQUESTS_PER_CLIENT):
            if time.monotonic() > deadline:
                return
            if rng.random() < 0.1:
                path = rng.choice(['/v2.1/os-services?binary=nova-compute',
                                   '/v2.1/os-hypervisors?limit=100'])
                resp = client.get(path, version='2.53')
                results.append(('GET', path, resp))
                continue
            service = rng.choice(models)
            method, path, body, version, apply = _operations(service, rng)
            with service.lock:
                resp = client.request(method, path, body=body,
                                      version=version)
                if resp.status == 200:
                    apply()
                    service.writes += 1
            results.append((method, path, resp))

    def _watch_heartbeats(self, stop, decreases, samples):
        previous = self.report_counts()
        while not stop.wait(1):
            current = self.report_counts()
            samples.append(current)
            for host, count in current.items():
                if count < previous.get(host, 0):
                    decreases.append((host, previous[host], count))
            previous = current

    # --------------------------------------------------------------- test

    def test_last_acknowledged_write_wins(self):
        rows = self.database.services()
        hosts = sorted(rows)[:WRITTEN_HOSTS]
        models = [ServiceModel(host, rows[host]['uuid']) for host in hosts]
        start_counts = self.report_counts()

        stop_watch = threading.Event()
        decreases, samples = [], []
        watcher = threading.Thread(target=self._watch_heartbeats,
                                   args=(stop_watch, decreases, samples))
        watcher.start()
        results = []
        started = time.monotonic()
        deadline = started + DURATION
        clients = [threading.Thread(target=self._client,
                                    args=(index, models, deadline, results))
                   for index in range(CLIENTS)]
        for thread in clients:
            thread.start()
        for thread in clients:
            thread.join(DURATION + 120)
        elapsed = time.monotonic() - started
        # Let every host heartbeat twice more over the final flags (the
        # first may have read them before the last write).
        after_writes = self.report_counts()
        self.assertTrue(processes.wait_until(lambda: all(
            count >= after_writes[host] + 2
            for host, count in self.report_counts().items()),
            timeout=60, interval=0.5))
        stop_watch.set()
        watcher.join(10)

        failures = ['%s %s: %r' % (method, path, resp)
                    for method, path, resp in results if resp.status != 200]
        rows = self.database.services()

        def stored(host):
            return (rows[host]['forced_down'], rows[host]['disabled'],
                    rows[host]['disabled_reason'])

        lost = ['%s: database %s, acknowledged %s' % (
            model.host, stored(model.host), model.flags)
            for model in models if stored(model.host) != model.flags]
        untouched = [host for host in sorted(rows)[WRITTEN_HOSTS:]
                     if stored(host) != (False, False, None)]
        listing = api_processes.Client(self.api.client.port).get(
            '/v2.1/os-services?binary=nova-compute', version='2.53')
        self.assertEqual(200, listing.status, listing)
        views = {s['host']: (s['forced_down'], s['status'] == 'disabled',
                             s['disabled_reason'])
                 for s in listing.json()['services']}
        api_wrong = [model.host for model in models
                     if views[model.host] != model.flags]
        final_counts = self.report_counts()
        not_grown = [host for host in start_counts
                     if final_counts[host] <= start_counts[host]]

        writes = sum(model.writes for model in models)
        figures.record(
            self, backend='postgresql', api_workers=4, clients=CLIENTS,
            hosts=HOSTS, requests_sent=len(results),
            acknowledged_writes=writes,
            failures=len(failures), writes_lost=len(lost),
            seconds=round(elapsed, 1),
            requests_per_second=round(len(results) / elapsed, 1),
            heartbeats=sum(final_counts.values()) -
            sum(start_counts.values()))
        self.assertEqual([], failures[:20], '%d failures' % len(failures))
        self.assertEqual([], lost, 'writes lost or heartbeats cleared a flag')
        self.assertEqual([], untouched)
        self.assertEqual([], api_wrong)
        self.assertEqual([], decreases, 'report_count went down')
        self.assertEqual([], not_grown, 'hosts that stopped heartbeating')
        self.assertGreater(writes, CLIENTS * 10)
        self.assertNotIn('Traceback', self.api.output())
        self.assertNotIn('Traceback', self.agent.output())
