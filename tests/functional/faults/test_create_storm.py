"""Servers created in a storm while hosts fail, on SQLite, PostgreSQL and
MariaDB.

The real API server (two workers) and three real fake-driver agents: two
of four hosts each that keep running, and one of two hosts (``lost-``)
that is killed with SIGKILL a third of the way through and restarted at
the end. :data:`CLIENTS` threads create :data:`SERVERS` servers through
``POST /servers``, one per request, at microversions from 2.1 to 2.96, of
three flavors sized from the hypervisors so that each fills a different
resource of a node, some as an admin naming a host (2.74); the hosts hold
about :data:`FILL` of them, so they fill up. Meanwhile a fencer thread
forces steady hosts down and up again (2.11 and 2.53 forms), a disabler
thread disables and enables them, and the agent of the ``lost-`` hosts
is killed: they go down after ``service_down_time``.

What a user would notice is asserted at the end:

- every create is answered 202: every body is valid, and a server that
  no host takes is ERROR with Nova's "No valid host" fault, not a 4xx;
- no server sits on a host that could not take it when it was placed. A
  force-down or a disable is a window: from its 200 (committed) to the
  moment the request that undoes it is sent. A server whose placement
  began inside the window (the later of its request's start and its
  ``created_at``, stamped by the placement transaction) and whose answer
  came before the window closed was placed entirely while the host was
  forced down or disabled: it must not be there. A lost host is down from
  its last heartbeat plus ``service_down_time`` until its agent is
  restarted: a server whose request started after that moment must not
  be there. The bounds are conservative (a create that overlaps an edge
  is not judged), so the check never fails on timing, and it holds for
  every create: the test waits, at each window, until creates were
  answered inside it, and lets the last third of the creates start only
  once the ``lost-`` hosts are down;
- no node holds more than its capacity with Nova's allocation ratios
  (vCPUs 4.0, memory 1.0, disk 1.0): the flavors of its servers, as the
  servers' own views show them (2.47), against the hypervisor's view;
- every server ends ACTIVE, or ERROR with a fault. A server placed on a
  ``lost-`` host after its agent was killed stays BUILD as long as the
  agent is away, as Nova's would (nothing spawns it, and nothing may
  place it elsewhere: it may be running there for all the cloud knows),
  and is ACTIVE once the agent is back: that is asserted before and after
  the restart.

The figures (servers, clients, wall time, results) are recorded with the
test (:mod:`tests.fixtures.figures`). CI runs :data:`SERVERS` servers;
``NOVA_FORCEDOWN_STORM_SERVERS=500`` runs the full size.
"""

import collections
import datetime
import itertools
import os
import random
import signal
import threading
import time

import fixtures
import sqlalchemy as sa
import testtools
from testtools import content

from nova_forcedown.db import models
from nova_forcedown.db import schema
from tests.fixtures import api_processes
from tests.fixtures import figures
from tests.fixtures import processes
from tests.fixtures import server_database

# Servers created in all, and the client threads creating them. CI's
# size; the full size is 500 (NOVA_FORCEDOWN_STORM_SERVERS=500).
SERVERS = int(os.environ.get('NOVA_FORCEDOWN_STORM_SERVERS', '150'))
CLIENTS = 16
# The share of the servers the hosts have room for, all up.
FILL = 0.6
SERVICE_DOWN_TIME = 4
# (host prefix, hosts) of the agents that keep running, and of the one
# that is killed.
STEADY = (('steady-a-', 4), ('steady-b-', 4))
LOST = ('lost-', 2)
# Nova's initial allocation ratios: vCPUs, memory, disk.
RATIOS = (4.0, 1.0, 1.0)
VERSIONS = ('2.1', '2.37', '2.47', '2.74', '2.96')
# Share of the creates that name a host (as an admin, at 2.74).
PINNED = 0.1
IMAGE = '6a3e9d52-7c1f-4b8e-9f2d-0e5b4c3a2d10'
USER_TOKEN = 'storm:' + 'f' * 32
# Creates answered inside a force-down or disable window before it ends
# (at least); and the longest a window waits for them.
HOLD_CREATES = (2, 8)
HOLD_LIMIT = 60
# Seconds the creates, the agents' builds and the lost hosts' going
# down may take on two busy cores.
STORM_LIMIT = 600
SETTLE_LIMIT = 120
DOWN_LIMIT = 60
NO_VALID_HOST = 'No valid host was found'


def _epoch(moment):
    """Seconds since the epoch of a naive UTC datetime from the database."""
    return moment.replace(tzinfo=datetime.timezone.utc).timestamp()


def _newer(version, than):
    return tuple(map(int, version.split('.'))) >= tuple(
        map(int, than.split('.')))


class SqliteFile(fixtures.Fixture):
    """A migrated SQLite file, read as the server databases are."""

    def _setUp(self):
        directory = self.useFixture(fixtures.TempDir()).path
        self.url_text = 'sqlite:///' + os.path.join(directory, 'nf.sqlite')
        self.engine = sa.create_engine(self.url_text,
                                       poolclass=sa.pool.NullPool)
        self.addCleanup(self.engine.dispose)
        schema.db_sync(self.engine)


Create = collections.namedtuple('Create', (
    'index', 'version', 'flavor', 'host', 'started', 'ended', 'status',
    'uuid', 'body'))
# A force-down or disable of ``host``: from ``begun`` (its 200) to
# ``ended`` (the undoing request sent).
Window = collections.namedtuple('Window', 'kind host begun ended')


class Creates:
    """The client threads and what each create was answered."""

    def __init__(self, port, flavors, hosts, seed, lost_down):
        self.port = port
        self.flavors = flavors
        self.hosts = hosts
        self.seed = seed
        # Creates of the last third start once the lost hosts are down.
        self.lost_down = lost_down
        self.done = []
        self._next = itertools.count()
        self._condition = threading.Condition()
        self._threads = []

    def start(self):
        for number in range(CLIENTS):
            thread = threading.Thread(target=self._loop, args=(number,),
                                      name='client-%d' % number,
                                      daemon=True)
            thread.start()
            self._threads.append(thread)

    def join(self, timeout):
        deadline = time.monotonic() + timeout
        for thread in self._threads:
            thread.join(max(0, deadline - time.monotonic()))
        return not any(thread.is_alive() for thread in self._threads)

    def answered(self):
        with self._condition:
            return len(self.done)

    def answered_after(self, moment):
        """How many creates that started after ``moment`` were answered."""
        with self._condition:
            return sum(1 for create in self.done if create.started > moment)

    def _loop(self, number):
        rng = random.Random('%s/client-%d' % (self.seed, number))
        user = api_processes.Client(self.port, token=USER_TOKEN, timeout=60)
        admin = api_processes.Client(self.port, timeout=60)
        while True:
            index = next(self._next)
            if index >= SERVERS:
                return
            if index >= 2 * SERVERS // 3:
                self.lost_down.wait(DOWN_LIMIT + STORM_LIMIT)
            create = self._create(index, rng, user, admin)
            with self._condition:
                self.done.append(create)

    def _create(self, index, rng, user, admin):
        flavor = rng.choice(self.flavors)
        host = rng.choice(self.hosts) if rng.random() < PINNED else None
        version = '2.74' if host else rng.choice(VERSIONS)
        server = {'name': 'storm-%d' % index, 'imageRef': IMAGE,
                  'flavorRef': flavor}
        if _newer(version, '2.37'):
            server['networks'] = rng.choice(('none', 'auto'))
        if host:
            server['host'] = host
        client = admin if host else user
        started = time.time()
        resp = client.request('POST', '/v2.1/servers', {'server': server},
                              version=version)
        ended = time.time()
        uuid = resp.json()['server']['id'] if resp.status == 202 else None
        return Create(index, version, flavor, host, started, ended,
                      resp.status, uuid, resp.text[:300])


class Toggler(threading.Thread):
    """Forces steady hosts down and up, or disables and enables them."""

    def __init__(self, kind, client, services, hosts, creates, seed):
        super().__init__(name=kind, daemon=True)
        self.kind = kind
        self.client = client
        self.services = services
        self.hosts = hosts
        self.creates = creates
        self.rng = random.Random('%s/%s' % (seed, kind))
        self.windows = []
        self.errors = []
        self.stopping = threading.Event()

    def run(self):
        while not self.stopping.is_set():
            host = self.rng.choice(self.hosts)
            version = self.rng.choice(('2.11', '2.53') if
                                      self.kind == 'forced_down' else
                                      ('2.1', '2.53'))
            if not self._set(host, version, True):
                continue
            begun = time.time()
            wanted = self.rng.randint(*HOLD_CREATES)
            processes.wait_until(
                lambda: self.stopping.is_set() or
                self.creates.answered_after(begun) >= wanted,
                timeout=HOLD_LIMIT, interval=0.02)
            self.windows.append(Window(self.kind, host, begun, time.time()))
            self._set(host, version, False)

    def _set(self, host, version, bad):
        """Force down (up) or disable (enable) ``host``; whether done."""
        if version == '2.53':
            body = ({'forced_down': bad} if self.kind == 'forced_down'
                    else {'status': 'disabled' if bad else 'enabled'})
            resp = self.client.put('/v2.1/os-services/' +
                                   self.services[host], body,
                                   version=version)
        elif self.kind == 'forced_down':
            resp = self.client.put('/v2.1/os-services/force-down', {
                'host': host, 'binary': 'nova-compute',
                'forced_down': bad}, version=version)
        else:
            resp = self.client.put(
                '/v2.1/os-services/' + ('disable' if bad else 'enable'),
                {'host': host, 'binary': 'nova-compute'}, version=version)
        if resp.status != 200:
            self.errors.append('%s %s %s: %r' % (self.kind, host, bad, resp))
            if not bad:
                # A window left open would judge later creates wrongly.
                self.windows.append(Window(self.kind, host, time.time(),
                                           float('inf')))
        return resp.status == 200


class _CreateStormMixin:

    BACKEND = None

    def setUp(self):
        super().setUp()
        if self.BACKEND == 'sqlite':
            self.database = self.useFixture(SqliteFile())
        else:
            self.database = self.useFixture(
                server_database.ServerDatabase(self.BACKEND))
        self.deployment = self.useFixture(api_processes.Deployment(
            self.database.url_text, workers=2, threads=8,
            service_down_time=SERVICE_DOWN_TIME))
        self.api = self.deployment.start_api()
        self.addOnException(lambda exc_info: self.addDetail(
            'api-log', content.text_content(
                self.api.output()[-20000:])))
        self.admin = self.api.client
        self.admin.timeout = 60
        self.agents = [self._start_agent(prefix, count)
                       for prefix, count in STEADY]
        self.lost_agent = self._start_agent(*LOST)
        self.steady = ['%s%d' % (prefix, number) for prefix, count in STEADY
                       for number in range(1, count + 1)]
        self.lost = ['%s%d' % (LOST[0], number)
                     for number in range(1, LOST[1] + 1)]
        self.assertTrue(processes.wait_until(
            lambda: self._states(self.steady + self.lost) == {'up'},
            timeout=90), self._logs())
        self.services = {service['host']: service['id'] for service in
                         self._services('2.53')}

    def _start_agent(self, prefix, count):
        return self.deployment.start_agent(
            '--driver', 'fake', '--hosts', str(count), '--host-prefix',
            prefix, '--instances', '0')

    def _logs(self):
        return '\n'.join(process.output()[-3000:] for process in
                         [self.api] + self.agents + [self.lost_agent])

    def _services(self, version='2.11'):
        resp = self.admin.get('/v2.1/os-services?binary=nova-compute',
                              version=version)
        return resp.json()['services'] if resp.status == 200 else []

    def _states(self, hosts):
        """The set of the states of ``hosts``; None among them if unknown."""
        found = {service['host']: service['state']
                 for service in self._services()}
        return {found.get(host) for host in hosts}

    # ---------------------------------------------------------- set-up

    def _flavors(self):
        """Three flavors, each filling one resource of a node.

        ``per_host`` of each fit a node side by side, from the
        hypervisors' sizes: each takes a ``per_host``-th of its resource,
        less the little the other two kinds take of it (512 MB, one vCPU,
        1 GB), so a node holds three times ``per_host``, then is full.
        """
        resp = self.admin.get('/v2.1/os-hypervisors/detail', version='2.1')
        self.assertEqual(200, resp.status, resp)
        node = resp.json()['hypervisors'][0]
        hosts = len(self.steady) + len(self.lost)
        per_host = max(2, round(SERVERS * FILL / (3 * hosts)))
        small = (512, 1, 1)
        room = (node['memory_mb'], int(node['vcpus'] * RATIOS[0]),
                node['local_gb'])
        big = [(whole - 2 * per_host * little) // per_host
               for whole, little in zip(room, small)]
        sizes = {'storm.ram': (big[0], small[1], small[2]),
                 'storm.cpu': (small[0], big[1], small[2]),
                 'storm.disk': (small[0], small[1], big[2])}
        for name, (ram, vcpus, disk) in sizes.items():
            resp = self.admin.request('POST', '/v2.1/flavors', {'flavor': {
                'name': name, 'id': name, 'ram': ram, 'vcpus': vcpus,
                'disk': disk}}, version='2.1')
            self.assertEqual(200, resp.status, resp)
        return sorted(sizes), per_host

    # ------------------------------------------------------------ reads

    def _servers(self):
        """Every server as an admin lists it at 2.47 (flavor embedded)."""
        found = []
        path = '/v2.1/servers/detail?all_tenants=1'
        while path:
            resp = self.admin.get(path, version='2.47')
            self.assertEqual(200, resp.status, resp)
            page = resp.json()
            found += page['servers']
            path = None
            for link in page.get('servers_links', ()):
                if link['rel'] == 'next':
                    path = '/v2.1' + link['href'].split('/v2.1', 1)[1]
        return {server['id']: server for server in found}

    def _rows(self):
        """{uuid: (host, created_at seconds, vm_state)} of live servers."""
        instances = models.Instance.__table__
        with self.database.engine.connect() as connection:
            return {row.uuid: (row.host, _epoch(row.created_at),
                               row.vm_state)
                    for row in connection.execute(sa.select(
                        instances.c.uuid, instances.c.host,
                        instances.c.created_at, instances.c.vm_state).where(
                            instances.c.deleted == 0))}

    def _building(self):
        instances = models.Instance.__table__
        with self.database.engine.connect() as connection:
            return connection.execute(sa.select(sa.func.count()).where(
                instances.c.deleted == 0,
                instances.c.vm_state == 'building')).scalar()

    def _deadlocks(self):
        """PostgreSQL's count of the deadlocks in this database (figure)."""
        if self.BACKEND != 'postgresql':
            return None
        with self.database.engine.connect() as connection:
            return connection.execute(sa.text(
                'SELECT deadlocks FROM pg_stat_database WHERE datname = '
                'current_database()')).scalar()

    def _down_at(self):
        """{lost host: when it went down}: last heartbeat + down time.

        A host whose agent died before its first report counts from its
        registration, as the db driver has it (on a loaded machine the
        kill can come first).
        """
        services = models.Service.__table__
        with self.database.engine.connect() as connection:
            rows = connection.execute(sa.select(
                services.c.host, services.c.last_seen_up,
                services.c.created_at).where(
                    services.c.deleted == 0,
                    services.c.host.in_(self.lost))).all()
        return {row.host: _epoch(row.last_seen_up or row.created_at) +
                SERVICE_DOWN_TIME for row in rows}

    # ------------------------------------------------------------- test

    def test_create_storm(self):
        flavors, per_host = self._flavors()
        deadlocks = self._deadlocks()
        lost_down = threading.Event()
        # Clients waiting for it end with the test, whatever happens.
        self.addCleanup(lost_down.set)
        creates = Creates(self.api.client.port, flavors,
                          self.steady + self.lost, self.id(), lost_down)
        togglers = [Toggler(kind, api_processes.Client(self.admin.port,
                                                       timeout=60),
                            self.services, self.steady, creates, self.id())
                    for kind in ('forced_down', 'disabled')]
        for toggler in togglers:
            toggler.start()
        began = time.monotonic()
        creates.start()

        # A third of the way through, the lost hosts' agent dies; the last
        # third of the creates starts once those hosts are down.
        self.assertTrue(processes.wait_until(
            lambda: creates.answered() >= SERVERS // 3,
            timeout=STORM_LIMIT), self._logs())
        self.lost_agent.stop(signal.SIGKILL)
        killed = time.time()
        went_down = processes.wait_until(
            lambda: self._states(self.lost) == {'down'}, timeout=DOWN_LIMIT)
        down_at = self._down_at()
        lost_down.set()
        self.assertTrue(went_down, self._logs())

        finished = creates.join(STORM_LIMIT)
        for toggler in togglers:
            toggler.stopping.set()
        for toggler in togglers:
            toggler.join(HOLD_LIMIT + 60)
        stormed = time.monotonic()
        self.assertTrue(finished, 'the creates did not end')

        # Nothing spawns what was placed on the lost hosts while their
        # agent is away.
        rows = self._rows()
        waiting = sorted(uuid for uuid, (host, created, state) in
                         rows.items() if host in self.lost and
                         created > killed)
        servers = self._servers()
        self.assertEqual({'BUILD'}, {servers[uuid]['status']
                                     for uuid in waiting} or {'BUILD'})
        restarted = time.time()
        self.lost_agent = self._start_agent(*LOST)
        settled = processes.wait_until(lambda: self._building() == 0,
                                       timeout=SETTLE_LIMIT)
        recovered = time.monotonic()
        self.assertTrue(settled, '%d servers still building\n%s' % (
            self._building(), self._logs()))

        servers = self._servers()
        rows = self._rows()
        windows = [window for toggler in togglers
                   for window in toggler.windows]
        results = self._judge(creates.done, servers, rows, windows, down_at,
                              killed, restarted)
        resp = self.admin.get('/v2.1/os-hypervisors/detail', version='2.1')
        over = self._over_capacity(servers, resp.json()['hypervisors'])

        statuses = collections.Counter(create.status
                                       for create in creates.done)
        elapsed = sorted(create.ended - create.started
                         for create in creates.done)
        figures.record(
            self, backend=self.BACKEND, servers=SERVERS, clients=CLIENTS,
            hosts=len(self.steady) + len(self.lost), per_host_per_flavor=(
                per_host), storm_seconds=round(stormed - began, 1),
            recovery_seconds=round(recovered - stormed, 1),
            create_statuses=dict(statuses),
            create_seconds={'p50': round(elapsed[len(elapsed) // 2], 2),
                            'p99': round(elapsed[int(len(elapsed) * .99)],
                                         2),
                            'max': round(elapsed[-1], 2)},
            final_status=dict(collections.Counter(
                server['status'] for server in servers.values())),
            windows=dict(collections.Counter(w.kind for w in windows)),
            # Each costs a create a second (deadlock_timeout) and a retry.
            deadlocks=None if deadlocks is None else (
                self._deadlocks() - deadlocks),
            **results['figures'])

        self.assertEqual([], [error for toggler in togglers
                              for error in toggler.errors])
        self.assertEqual({202: SERVERS}, dict(statuses), [
            create for create in creates.done if create.status != 202][:5])
        self.assertEqual([], results['misplaced'])
        self.assertEqual([], over)
        self.assertEqual([], results['unfinished'])
        # The storm did what it is for: hosts filled up, servers were built,
        # and creates were judged inside every kind of window.
        self.assertGreater(results['figures']['no_valid_host'], 0)
        self.assertGreater(results['figures']['active'], 0)
        for kind in ('forced_down', 'disabled', 'lost'):
            self.assertGreater(results['figures']['judged'][kind], 0,
                               results['figures'])
        self.assertNotIn('Traceback', self.api.output())

    def _judge(self, done, servers, rows, windows, down_at, killed,
               restarted):
        """The misplaced servers, the unfinished ones, and the figures."""
        by_host = collections.defaultdict(list)
        for window in windows:
            by_host[window.host].append(window)
        lost_windows = {host: Window('lost', host, moment, restarted)
                        for host, moment in down_at.items()}
        misplaced, unfinished = [], []
        judged = collections.Counter()
        placed_on_lost_after_kill = 0
        for create in done:
            if create.uuid is None:
                continue
            server = servers.get(create.uuid)
            if server is None:
                unfinished.append('%s (%s) is not listed' % (create.uuid,
                                                             create.index))
                continue
            status = server['status']
            if status not in ('ACTIVE', 'ERROR') or (
                    status == 'ERROR' and not server.get('fault')):
                unfinished.append('%s %s: %s' % (create.uuid, status,
                                                 server.get('fault')))
            host = server['OS-EXT-SRV-ATTR:host']
            created = rows[create.uuid][1]
            placing = max(create.started, created)
            for window in by_host.get(host, ()):
                if window.begun < placing and create.ended < window.ended:
                    misplaced.append(self._misplaced(create, host, window,
                                                     created))
            lost = lost_windows.get(host)
            if lost is not None and lost.begun < create.started and (
                    create.ended < lost.ended):
                misplaced.append(self._misplaced(create, host, lost,
                                                 created))
            # How many creates the windows judged, whatever their host.
            for window in windows + list(lost_windows.values()):
                start = create.started if window.kind == 'lost' else placing
                if window.begun < start and create.ended < window.ended:
                    judged[window.kind] += 1
            if host in self.lost and created > killed:
                placed_on_lost_after_kill += 1
        states = collections.Counter(server['status']
                                     for server in servers.values())
        no_valid_host = sum(1 for server in servers.values()
                            if NO_VALID_HOST in (server.get('fault') or {})
                            .get('message', ''))
        return {'misplaced': misplaced, 'unfinished': unfinished,
                'figures': {'active': states['ACTIVE'],
                            'no_valid_host': no_valid_host,
                            'judged': {kind: judged[kind] for kind in
                                       ('forced_down', 'disabled', 'lost')},
                            'placed_on_lost_late': placed_on_lost_after_kill}}

    @staticmethod
    def _misplaced(create, host, window, created):
        return ('server %s (create %d, %s, %.3f-%.3f, created_at %.3f) on '
                '%s, %s from %.3f to %.3f' % (
                    create.uuid, create.index, create.version,
                    create.started, create.ended, created, host,
                    window.kind, window.begun, window.ended))

    @staticmethod
    def _over_capacity(servers, hypervisors):
        """Hosts whose servers take more than the node's room."""
        used = collections.defaultdict(lambda: [0, 0, 0])
        for server in servers.values():
            host = server['OS-EXT-SRV-ATTR:host']
            if host is None:
                continue
            flavor = server['flavor']
            for position, amount in enumerate((
                    flavor['vcpus'], flavor['ram'],
                    flavor['disk'] + flavor.get('ephemeral', 0))):
                used[host][position] += amount
        over = []
        for node in hypervisors:
            host = node['service']['host']
            room = [int(node[field] * ratio) for field, ratio in zip(
                ('vcpus', 'memory_mb', 'local_gb'), RATIOS)]
            if any(have > limit for have, limit in zip(used[host], room)):
                over.append('%s: %s over %s' % (host, used[host], room))
        return over


class TestCreateStormSqlite(_CreateStormMixin, testtools.TestCase):
    BACKEND = 'sqlite'


class TestCreateStormPostgreSQL(_CreateStormMixin, testtools.TestCase):
    BACKEND = 'postgresql'


class TestCreateStormMySQL(_CreateStormMixin, testtools.TestCase):
    BACKEND = 'mysql'
