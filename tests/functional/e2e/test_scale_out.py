"""API nodes scale out: several API servers behind HAProxy, one database.

Three ``nova-forcedown-api`` processes (each a gunicorn arbiter and its
workers) on their own loopback ports read one configuration file and one
PostgreSQL database; an agent heartbeats simulated hosts into it and HAProxy
balances clients over the servers, taking one out when its /healthcheck
fails. The servicegroup driver is the test class's parameter.

A force-down through any node, or through HAProxy, is seen as down by the
next request through every node, with python-novaclient. A node killed
with SIGKILL while client threads write and list through HAProxy loses no
write it acknowledged (every 2xx write's request id is in the service
history, and every host ends as its last acknowledged write left it), and
the other nodes go on answering; the test measures how many requests failed
around the kill, and for how long.
"""

import collections
from concurrent import futures
import signal
import threading
import time
import warnings

from keystoneauth1 import session as ks_session
from keystoneauth1 import token_endpoint
from novaclient import client as nova_client
from oslo_serialization import jsonutils
import psutil
import requests
import testtools
from testtools import content

from tests.fixtures import api_processes
from tests.fixtures import figures
from tests.fixtures import load_balancer
from tests.fixtures import processes
from tests.fixtures import redis_servers
from tests.fixtures import server_database

NODES = 3
HOSTS = 6
PREFIX = 'scale-'
TOKEN = api_processes.ADMIN_TOKEN

# The load: one client thread per host, each writing only its own host,
# for LOAD_BEFORE_KILL seconds, then LOAD_AFTER_KILL more after the kill.
LOAD_THREADS = HOSTS
LOAD_BEFORE_KILL = 3
LOAD_AFTER_KILL = 6
REQUEST_TIMEOUT = 20


def _host(index):
    return '%s%d' % (PREFIX, index)


class _Cluster(api_processes.Deployment):
    """One configuration file, several API servers started from it.

    ``extra_config`` is appended to the file (oslo.config merges a section
    named twice), e.g. the servicegroup driver and its backend.
    """

    def __init__(self, connection, extra_config, **kwargs):
        super().__init__(connection, **kwargs)
        self.extra_config = extra_config

    def _setUp(self):
        super()._setUp()
        with open(self.config_file, 'a') as config:
            config.write(self.extra_config)

    def start_nodes(self, count):
        """``count`` API servers, started together; each has ``port``."""
        nodes = []
        for _ in range(count):
            port = processes.free_port()
            node = self.useFixture(processes.Process([
                processes.script('nova-forcedown-api'), '--config-file',
                self.config_file, '--port', str(port)]))
            node.port = port
            nodes.append(node)
        for node in nodes:
            processes.wait_for_http('http://127.0.0.1:%d/' % node.port,
                                    process=node.process)
        return nodes


def kill_node(node):
    """SIGKILL a server and its workers at once, as a host crash would."""
    processes_of_node = [node.process.pid] + [
        child.pid for child in
        psutil.Process(node.process.pid).children(recursive=True)]
    for pid in processes_of_node:
        try:
            psutil.Process(pid).send_signal(signal.SIGKILL)
        except psutil.NoSuchProcess:
            pass
    node.process.wait(10)
    return len(processes_of_node)


def _nova(port, version='2.53'):
    session = ks_session.Session(auth=token_endpoint.Token(
        'http://127.0.0.1:%d/v2.1' % port, TOKEN))
    return nova_client.Client(version, session=session)


class _Request(collections.namedtuple('_Request', (
        'host', 'method', 'path', 'values', 'started', 'ended', 'status',
        'request_id'))):
    """One request a load thread sent, and its answer.

    ``values`` are what a write stores in the service row (None for a
    read); ``request_id`` is the answer's x-openstack-request-id, or the
    client's error when there was no answer (``status`` 0).
    """

    @property
    def succeeded(self):
        return 200 <= self.status < 300


def _stored_values(body):
    """The service row's fields that a write of ``body`` sets."""
    values = {}
    if 'forced_down' in body:
        values['forced_down'] = body['forced_down']
    if 'status' in body:
        values['disabled'] = body['status'] == 'disabled'
        values['disabled_reason'] = body.get('disabled_reason')
    return values


class _Load:
    """Client threads writing and listing through one port until stopped.

    Thread ``i`` owns host ``i``: it forces it down, lists services,
    disables it with a reason unique to the write, lists hypervisors,
    enables it and clears the force-down, over and over, on one keep-alive
    session. Every request is timed; every write kept with its answer.
    """

    def __init__(self, port, uuids):
        self.base = 'http://127.0.0.1:%d/v2.1' % port
        self.uuids = uuids
        self.stop = threading.Event()
        self.lock = threading.Lock()
        self.requests = []

    def _cycle(self, host):
        uuid = self.uuids[host]
        path = '/os-services/' + uuid
        serial = 0
        while True:
            serial += 1
            yield 'PUT', path, {'forced_down': True}
            yield 'GET', '/os-services', None
            yield 'PUT', path, {'status': 'disabled', 'disabled_reason':
                                'load %s #%d' % (host, serial)}
            yield 'GET', '/os-hypervisors/detail', None
            yield 'PUT', path, {'status': 'enabled'}
            yield 'PUT', path, {'forced_down': False}

    def _send(self, session, method, path, body):
        started = time.monotonic()
        try:
            response = session.request(
                method, self.base + path, json=body,
                timeout=REQUEST_TIMEOUT,
                headers={'X-Auth-Token': TOKEN,
                         'OpenStack-API-Version': 'compute 2.53'})
            status = response.status_code
            request_id = response.headers.get('x-openstack-request-id')
        except requests.RequestException as exc:
            status, request_id = 0, type(exc).__name__ + ': ' + str(exc)
        return started, time.monotonic(), status, request_id

    def run_thread(self, host):
        with requests.Session() as session:
            for method, path, body in self._cycle(host):
                if self.stop.is_set():
                    return
                request = _Request(
                    host, method, path,
                    _stored_values(body) if method == 'PUT' else None,
                    *self._send(session, method, path, body))
                with self.lock:
                    self.requests.append(request)

    @property
    def writes(self):
        return [request for request in self.requests
                if request.values is not None]

    def failures(self):
        return [request for request in self.requests
                if not request.succeeded]


def expected_rows(writes, initial):
    """host -> field -> the values the database may hold after ``writes``.

    A field holds what the last acknowledged write gave it (its value in
    ``initial``, host -> row, before any), or what a write after that one
    gave it if that write was not acknowledged: it may or may not have
    been applied before its node died.
    """
    expected = {}
    for write in sorted(writes, key=lambda write: write.started):
        fields = expected.setdefault(write.host, {})
        for field, value in write.values.items():
            if write.succeeded:
                fields[field] = {value}
            else:
                fields.setdefault(
                    field, {initial[write.host][field]}).add(value)
    return expected


class _ScaleOutMixin:

    # The [DEFAULT] servicegroup_driver of every API server and the agent.
    SERVICEGROUP_DRIVER = None

    def servicegroup_config(self):
        """Configuration text the driver needs besides its name.

        A driver with a backend (tooz) sets that backend up here, with
        fixtures, and names it in a section of its own.
        """
        return ''

    def setUp(self):
        super().setUp()
        warnings.simplefilter('ignore')
        self.database = self.useFixture(
            server_database.ServerDatabase('postgresql'))
        cluster = self.useFixture(_Cluster(
            self.database.url_text, workers=2, threads=8,
            extra_config='\n[DEFAULT]\nservicegroup_driver = %s\n%s' % (
                self.SERVICEGROUP_DRIVER, self.servicegroup_config())))
        self.nodes = cluster.start_nodes(NODES)
        self.agent = cluster.start_agent(
            '--driver', 'fake', '--hosts', str(HOSTS), '--host-prefix',
            PREFIX)
        self.balancer = self.useFixture(load_balancer.HAProxy(
            [node.port for node in self.nodes]))
        self.balancer.wait_for_status(
            {load_balancer.server_name(index): 'UP'
             for index in range(NODES)}, timeout=60)
        self.assertTrue(processes.wait_until(
            lambda: len(self.database.services()) == HOSTS and
            min(row['report_count'] for row in
                self.database.services().values()) > 0, timeout=60),
            self.agent.output())
        self.uuids = {host: row['uuid'] for host, row in
                      self.database.services().items()}

    def entry_points(self):
        """Name -> port: HAProxy first, then every node directly."""
        points = {'haproxy': self.balancer.port}
        for index, node in enumerate(self.nodes):
            points[load_balancer.server_name(index)] = node.port
        return points

    def assert_no_traceback(self, nodes):
        for node in nodes:
            self.assertNotIn('Traceback', node.output())

    # ------------------------------------------- force-down, every node

    def states_through(self, port):
        """host -> (service state, forced_down, hypervisor state)."""
        nova = _nova(port)
        services = {service.host: service for service in
                    nova.services.list(binary='nova-compute')}
        hypervisors = {hypervisor.service['host']: hypervisor.state
                       for hypervisor in nova.hypervisors.list()}
        return {host: (service.state, service.forced_down,
                       hypervisors[host])
                for host, service in services.items()}

    def expected(self, forced):
        return {host: ('down', True, 'down') if host in forced else
                ('up', False, 'up') for host in self.uuids}

    def assert_seen_everywhere(self, forced, after):
        for name, port in self.entry_points().items():
            self.assertEqual(self.expected(forced), self.states_through(port),
                             'through %s, after %s' % (name, after))

    def test_force_down_through_any_node_is_down_at_once_everywhere(self):
        self.assert_seen_everywhere(set(), 'start')
        points = list(self.entry_points().items())
        forced = set()
        # Each entry point forces down a host of its own, by uuid (2.53)
        # and by host name (2.11); every node sees it by the next request.
        for index, (name, port) in enumerate(points):
            host = _host(index + 1)
            if index % 2:
                result = _nova(port, '2.11').services.force_down(
                    host, 'nova-compute', True)
            else:
                result = _nova(port).services.force_down(
                    self.uuids[host], True)
            self.assertTrue(result.forced_down)
            forced.add(host)
            self.assert_seen_everywhere(forced, 'force-down of %s via %s'
                                        % (host, name))
        # And each clears, through another entry point than the one that
        # set it.
        for index, (name, port) in enumerate(points):
            host = _host((index + 1) % len(points) + 1)
            _nova(port).services.force_down(self.uuids[host], False)
            forced.discard(host)
            self.assert_seen_everywhere(forced, 'clearing %s via %s'
                                        % (host, name))
        self.assert_no_traceback(self.nodes)

    # ------------------------------------------- a node killed mid-load

    def unrecorded(self, writes):
        """The acknowledged ``writes`` the service history does not show.

        A write is shown by its own entry, or by the entry of a request
        that made the same change: HAProxy retries on another node a
        request whose node died after committing it, and the retry,
        changing nothing, records nothing.
        """
        rows = self.database.query(
            'SELECT request_id, host, changes FROM service_history')
        recorded = {row['request_id'] for row in rows}
        changes = collections.defaultdict(list)
        for row in rows:
            changes[row['host']].append(
                {change['field']: change['new']
                 for change in jsonutils.loads(row['changes'])})
        return [write for write in writes
                if write.request_id not in recorded and not any(
                    made and all(field in write.values and
                                 write.values[field] == new
                                 for field, new in made.items())
                    for made in changes[write.host])]

    def run_load_and_kill(self, load, victim, victim_name):
        """Load for a while, kill ``victim``, load on; kill figures."""
        with futures.ThreadPoolExecutor(LOAD_THREADS) as pool:
            threads = [pool.submit(load.run_thread, _host(index + 1))
                       for index in range(LOAD_THREADS)]
            time.sleep(LOAD_BEFORE_KILL)
            sent_before = int(self.balancer.servers()[victim_name]['stot'])
            killed_at = time.monotonic()
            killed_processes = kill_node(victim)
            taken_out_after = self.balancer.wait_for_status(
                {victim_name: 'DOWN'}, timeout=LOAD_AFTER_KILL)
            time.sleep(max(0, LOAD_AFTER_KILL -
                           (time.monotonic() - killed_at)))
            load.stop.set()
            for thread in threads:
                thread.result()
        return killed_at, {'requests_sent_to_killed_node': sent_before,
                           'processes_killed': killed_processes,
                           'taken_out_seconds': round(taken_out_after, 3)}

    def test_killing_a_node_under_load_loses_no_acknowledged_write(self):
        initial = self.database.services()
        load = _Load(self.balancer.port, self.uuids)
        victim, survivors = self.nodes[0], self.nodes[1:]
        killed_at, kill = self.run_load_and_kill(
            load, victim, load_balancer.server_name(0))
        self.addDetail('haproxy log', content.text_content(
            self.balancer.process.output()))

        failures = load.failures()
        after_kill = [request for request in load.requests
                      if request.started > killed_at]
        acknowledged = [write for write in load.writes if write.succeeded]
        stats = self.balancer.servers().values()
        figures.record(
            self, servicegroup_driver=self.SERVICEGROUP_DRIVER,
            nodes=NODES, client_threads=LOAD_THREADS, **kill,
            requests=len(load.requests),
            requests_after_kill=len(after_kill),
            writes=len(load.writes), acknowledged_writes=len(acknowledged),
            failed_requests=[(request.method, request.path, request.status,
                              round(request.started - killed_at, 3),
                              round(request.ended - killed_at, 3),
                              request.request_id)
                             for request in failures],
            haproxy_retries=sum(int(row['wretr'] or 0) for row in stats),
            haproxy_redispatches=sum(int(row['wredis'] or 0)
                                     for row in stats),
            slowest_request_seconds=round(max(
                request.ended - request.started
                for request in load.requests), 3))

        # The kill happened under load, and the load went on after it.
        self.assertGreater(kill['requests_sent_to_killed_node'], 0)
        self.assertGreater(len(after_kill), 10 * LOAD_THREADS)
        # No acknowledged write is lost: each is in the service history,
        # and each host ends as its last acknowledged write left it.
        self.assertEqual([], self.unrecorded(acknowledged))
        rows = self.database.services()
        for host, fields in expected_rows(load.writes, initial).items():
            for field, allowed in fields.items():
                self.assertIn(rows[host][field], allowed,
                              '%s %s' % (host, field))
        # The others keep answering: directly, and through HAProxy.
        for node in survivors:
            resp = api_processes.Client(node.port).get('/v2.1/os-services')
            self.assertEqual(200, resp.status, resp)
        resp = api_processes.Client(self.balancer.port).get(
            '/v2.1/os-services')
        self.assertEqual(200, resp.status, resp)
        # Each client thread had at most one request in flight on the
        # killed node (HAProxy retries even those elsewhere), and nothing
        # fails once HAProxy has taken the node out.
        self.assertLessEqual(len(failures), LOAD_THREADS, failures)
        taken_out_at = killed_at + kill['taken_out_seconds']
        self.assertEqual([], [request for request in failures
                              if request.started > taken_out_at])
        self.assert_no_traceback(survivors)


class TestScaleOutDb(_ScaleOutMixin, testtools.TestCase):
    SERVICEGROUP_DRIVER = 'db'


class TestScaleOutTooz(_ScaleOutMixin, testtools.TestCase):
    SERVICEGROUP_DRIVER = 'tooz'

    def servicegroup_config(self):
        redis = self.useFixture(redis_servers.RedisNamespace())
        return '\n[coordination]\nbackend_url = %s\n' % redis.url
