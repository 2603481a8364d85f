#!/usr/bin/env python3
"""Benchmark the compute API at cloud scale: listings, force-down, heartbeats.

    python tools/benchmark.py --hosts 1000,5000,10000 [--db-url URL]
                              [--json FILE]

For each host count it seeds a fresh database (a temporary SQLite file, or a
database of its own created on the server of ``--db-url`` and dropped
afterwards) with N nova-compute services and their compute nodes, plus a
few other binaries; some hosts are disabled, some down (old heartbeat), some
forced down. It then starts the real server, the ``nova-forcedown-api``
console script of this interpreter's environment (gunicorn, ``--workers``
processes), on a loopback port and measures over HTTP with keep-alive
connections:

* median and p95 of each listing, and a *floor* for it: the same rows read
  with one plain SQL query on a DB-API cursor and encoded with json.dumps,
  in this process; every listing is also shown as a ratio to its floor;
* median and p99 of a force-down at 2.11 (PUT /os-services/force-down) and
  2.53 (PUT /os-services/{uuid}), sequential and with 8 concurrent clients,
  and the sustained force-down rate of 8 clients, counting failures;
* the SQL statements each request ran, counted inside the server: the
  server is started with NOVA_FORCEDOWN_COUNT_SQL=1, which makes it count
  the statements of each request and answer them in the
  X-Nova-Forcedown-SQL-Statements header (off unless that variable is set);
* slow clients (at the first host count): 8 clients list services and
  force hosts down and up for ``--slow-seconds``, once alone and once
  while ``--slow-clients`` connections send their headers a byte a second
  or stall after one byte of a 1000-byte body; failures, p99 of both runs
  and their ratio;
* the heartbeat rate of the DB servicegroup driver over the N services,
  sent by agent processes forked from this one: one host per agent
  (report_state, one UPDATE per heartbeat, as a cloud of one agent per
  host sends them) and agents of many hosts (report_states of
  ``--heartbeat-batch`` services, one UPDATE for them all);
* the peak RSS of the API processes, master and workers summed (sampled
  with psutil while the listings run).

It prints one table and writes the same figures as JSON (``--json``).
Iterations are bounded so that 1k, 5k and 10k hosts take minutes, not hours.
"""

import argparse
import concurrent.futures
import datetime
import http.client
import itertools
import json
import logging
import multiprocessing
import os
import platform
import selectors
import shutil
import signal
import socket
import statistics
import subprocess
import sys
import tempfile
import threading
import time
import uuid

import psutil
import sqlalchemy as sa

from nova_forcedown import conf as nf_conf
from nova_forcedown import context as nf_context
from nova_forcedown.db import api as db_api
from nova_forcedown.db import migration
from nova_forcedown.db import models
from nova_forcedown import objects
from nova_forcedown.objects import service as service_obj
from nova_forcedown.servicegroup.drivers import db as db_driver

STATEMENTS_HEADER = 'X-Nova-Forcedown-SQL-Statements'
COUNT_SQL_ENV = 'NOVA_FORCEDOWN_COUNT_SQL'
TOKEN = 'admin:6f70656e737461636b'
HIDDEN_BINARIES = ('nova-osapi_compute', 'nova-metadata')
OTHER_BINARIES = ('nova-scheduler', 'nova-conductor')
CLIENTS = 8


# ----------------------------------------------------------------- seeding

def _host(index):
    return 'compute-%05d' % index


def seed(engine, hosts, controllers=3):
    """N computes with nodes, and a few controllers with other binaries.

    Every 10th host is disabled, every 25th has not reported for an hour
    (down), every 50th is forced down; one in four nodes has an uptime in
    its stats. Returns {host: service uuid} of the computes.
    """
    now = datetime.datetime.utcnow().replace(microsecond=0)
    stale = now - datetime.timedelta(hours=1)
    services, nodes, uuids = [], [], {}
    service_id = 0
    for index in range(1, hosts + 1):
        service_id += 1
        host = _host(index)
        uuids[host] = str(uuid.uuid4())
        services.append(dict(
            id=service_id, uuid=uuids[host], host=host,
            binary='nova-compute', topic='compute', report_count=index,
            disabled=index % 10 == 0,
            disabled_reason='maintenance' if index % 10 == 0 else None,
            last_seen_up=stale if index % 25 == 0 else now,
            forced_down=index % 50 == 0, version=1,
            availability_zone='az%d' % (index % 3) if index % 2 else None,
            created_at=now, updated_at=now, deleted_at=None, deleted=0))
        nodes.append(dict(
            id=index, uuid=str(uuid.uuid4()), service_id=service_id,
            host=host, hypervisor_hostname=host + '.example.org',
            hypervisor_type='QEMU', hypervisor_version=8002000,
            host_ip='10.%d.%d.%d' % (index // 65536, index // 256 % 256,
                                     index % 256),
            cpu_info=json.dumps({'arch': 'x86_64', 'model': 'Icelake',
                                 'vendor': 'Intel',
                                 'topology': {'cores': 16, 'sockets': 2,
                                              'threads': 2}}),
            vcpus=64, memory_mb=262144, local_gb=1800, vcpus_used=12,
            memory_mb_used=49152, local_gb_used=240, free_ram_mb=212992,
            free_disk_gb=1560, current_workload=0, running_vms=6,
            disk_available_least=1500,
            stats=json.dumps({'uptime': ' 10:01:02 up 42 days, load '
                                        'average: 0.1, 0.2, 0.3'})
            if index % 4 == 0 else None,
            created_at=now, updated_at=now, deleted_at=None, deleted=0))
    for index in range(1, controllers + 1):
        for binary in OTHER_BINARIES + HIDDEN_BINARIES:
            service_id += 1
            services.append(dict(
                id=service_id, uuid=str(uuid.uuid4()),
                host='controller-%d' % index, binary=binary,
                topic=binary[5:] if binary in OTHER_BINARIES else None,
                report_count=1, disabled=index == controllers,
                disabled_reason=None, last_seen_up=now,
                forced_down=False, version=1, availability_zone=None,
                created_at=now, updated_at=now, deleted_at=None,
                deleted=0))
    with engine.begin() as connection:
        for table, rows in ((models.Service.__table__, services),
                            (models.ComputeNode.__table__, nodes)):
            for start in range(0, len(rows), 2000):
                connection.execute(table.insert(), rows[start:start + 2000])
    if engine.dialect.name == 'postgresql':
        with engine.begin() as connection:
            for table in ('services', 'compute_nodes'):
                connection.exec_driver_sql(
                    "SELECT setval(pg_get_serial_sequence('%s', 'id'), "
                    "(SELECT max(id) FROM %s))" % (table, table))
            connection.exec_driver_sql('ANALYZE')
    return uuids


class Database:
    """A fresh, migrated database: a temp SQLite file or one on a server."""

    def __init__(self, server_url=None):
        self.directory = tempfile.mkdtemp(prefix='nf-benchmark-')
        self.server_url = server_url
        self.name = None
        if server_url is None:
            self.url = sa.engine.make_url(
                'sqlite:///' + os.path.join(self.directory, 'nf.sqlite'))
        else:
            self.name = 'nf_benchmark_%d_%d' % (os.getpid(),
                                                int(time.time() * 1000))
            self._admin(['CREATE DATABASE %s' % self.name])
            self.url = sa.engine.make_url(server_url).set(database=self.name)
        self.url_text = self.url.render_as_string(hide_password=False)

    def _admin(self, statements):
        engine = sa.create_engine(self.server_url,
                                  isolation_level='AUTOCOMMIT',
                                  poolclass=sa.pool.NullPool)
        try:
            with engine.connect() as connection:
                for statement in statements:
                    connection.exec_driver_sql(statement)
        finally:
            engine.dispose()

    @property
    def backend(self):
        return self.url.get_backend_name()

    def drop(self):
        if self.name is not None:
            if self.backend == 'postgresql':
                self._admin([
                    'SELECT pg_terminate_backend(pid) FROM pg_stat_activity '
                    "WHERE datname = '%s' AND pid <> pg_backend_pid()"
                    % self.name])
            self._admin(['DROP DATABASE IF EXISTS %s' % self.name])
        shutil.rmtree(self.directory, ignore_errors=True)


# ------------------------------------------------------------ the server

def _free_port():
    with socket.socket() as probe:
        probe.bind(('127.0.0.1', 0))
        return probe.getsockname()[1]


class Server:
    """The real nova-forcedown-api console script, on a loopback port."""

    def __init__(self, database, workers, threads):
        self.port = _free_port()
        self.config = os.path.join(database.directory, 'nova_forcedown.conf')
        # SQLite files use a NullPool, which takes no pool timeout.
        pool = ('pool_timeout =\n' if database.backend == 'sqlite' else '')
        with open(self.config, 'w') as config:
            config.write(
                '[DEFAULT]\nstate_path = %s\n'
                '[api]\nauth_strategy = noauth2\n'
                '[database]\nconnection = %s\n%s'
                '[wsgi]\nhost = 127.0.0.1\nport = %d\nworkers = %d\n'
                'threads = %d\n'
                % (database.directory, database.url_text.replace('%', '%%'),
                   pool, self.port, workers, threads))
        self.log_path = os.path.join(database.directory, 'api.log')
        self.process = None

    def start(self):
        script = os.path.join(os.path.dirname(sys.executable),
                              'nova-forcedown-api')
        self._log = open(self.log_path, 'wb')
        env = dict(os.environ, **{COUNT_SQL_ENV: '1'})
        self.process = subprocess.Popen(
            [script, '--config-file', self.config], stdout=self._log,
            stderr=subprocess.STDOUT, stdin=subprocess.DEVNULL, env=env)
        deadline = time.monotonic() + 60
        while time.monotonic() < deadline:
            if self.process.poll() is not None:
                raise RuntimeError('the API exited with %s:\n%s' % (
                    self.process.returncode, self.log()))
            try:
                status, _, _ = Client(self.port).request('GET', '/')
                if status == 200 and len(self.processes()) > 1:
                    return
            except OSError:
                pass
            time.sleep(0.2)
        raise RuntimeError('the API did not answer:\n' + self.log())

    def processes(self):
        try:
            master = psutil.Process(self.process.pid)
            return [master] + master.children(recursive=True)
        except psutil.NoSuchProcess:
            return []

    def rss(self):
        """(sum over master and workers, largest single process) in bytes."""
        sizes = []
        for proc in self.processes():
            try:
                sizes.append(proc.memory_info().rss)
            except psutil.NoSuchProcess:
                pass
        return sum(sizes), max(sizes or [0])

    def log(self):
        with open(self.log_path, errors='replace') as log:
            return log.read()[-4000:]

    def stop(self):
        if self.process is not None and self.process.poll() is None:
            self.process.send_signal(signal.SIGTERM)
            try:
                self.process.wait(20)
            except subprocess.TimeoutExpired:
                self.process.kill()
                self.process.wait()
        if self.process is not None:
            self._log.close()


class RssSampler(threading.Thread):
    """Peak RSS of the server's processes, sampled every 50 ms."""

    def __init__(self, server):
        super().__init__(daemon=True)
        self.server = server
        self.peak_sum = self.peak_process = 0
        self._done = threading.Event()

    def run(self):
        while not self._done.is_set():
            total, largest = self.server.rss()
            self.peak_sum = max(self.peak_sum, total)
            self.peak_process = max(self.peak_process, largest)
            self._done.wait(0.05)

    def stop(self):
        self._done.set()
        self.join()


class Client:
    """One keep-alive HTTP/1.1 connection (http.client: little client CPU)."""

    def __init__(self, port):
        self.port = port
        self.connection = http.client.HTTPConnection('127.0.0.1', port,
                                                     timeout=120)

    def request(self, method, path, version=None, body=None):
        """(status, statements or None, body bytes); reconnects once."""
        headers = {'X-Auth-Token': TOKEN, 'Accept': 'application/json'}
        if version:
            headers['OpenStack-API-Version'] = 'compute ' + version
        data = None
        if body is not None:
            data = json.dumps(body).encode()
            headers['Content-Type'] = 'application/json'
        for attempt in (1, 2):
            try:
                self.connection.request(method, '/v2.1' + path
                                        if path != '/' else path,
                                        body=data, headers=headers)
                response = self.connection.getresponse()
                payload = response.read()
                break
            except (http.client.HTTPException, ConnectionError):
                self.connection.close()
                if attempt == 2:
                    raise
        statements = response.getheader(STATEMENTS_HEADER)
        return (response.status,
                int(statements) if statements is not None else None,
                payload)

    def close(self):
        self.connection.close()


# ------------------------------------------------------------ measuring

def _percentile(values, fraction):
    ordered = sorted(values)
    if not ordered:
        return None
    index = min(len(ordered) - 1, int(round(fraction * (len(ordered) - 1))))
    return ordered[index]


def _ms(seconds):
    return None if seconds is None else round(seconds * 1000, 2)


def _timed(function, iterations, budget):
    """Run ``function`` up to ``iterations`` times or ``budget`` seconds."""
    times = []
    deadline = time.monotonic() + budget
    while len(times) < iterations and (len(times) < 3 or
                                       time.monotonic() < deadline):
        start = time.perf_counter()
        function()
        times.append(time.perf_counter() - start)
    return times


LISTINGS = [
    # name, path, microversion, floor query
    ('services 2.1', '/os-services', '2.1', 'services'),
    ('services 2.53', '/os-services', '2.53', 'services'),
    ('services 2.88', '/os-services', '2.88', 'services'),
    ('services ?host= 2.53', '/os-services?host=%(host)s', '2.53',
     'services_host'),
    ('hypervisors 2.1', '/os-hypervisors', '2.1', 'summary'),
    ('hypervisors 2.53', '/os-hypervisors', '2.53', 'summary'),
    ('hypervisors 2.88', '/os-hypervisors', '2.88', 'summary'),
    ('detail 2.1', '/os-hypervisors/detail', '2.1', 'detail'),
    ('detail 2.53', '/os-hypervisors/detail', '2.53', 'detail'),
    ('detail 2.88', '/os-hypervisors/detail', '2.88', 'detail'),
    ('detail 2.53 limit=1000', '/os-hypervisors/detail?limit=1000', '2.53',
     'detail_page'),
]

_SERVICE_COLUMNS = ('id', 'uuid', 'binary', 'host', 'topic',
                    'availability_zone', 'disabled', 'disabled_reason',
                    'last_seen_up', 'forced_down', 'updated_at')
_NODE_SUMMARY_COLUMNS = ('id', 'uuid', 'hypervisor_hostname')
_NODE_DETAIL_COLUMNS = _NODE_SUMMARY_COLUMNS + (
    'hypervisor_type', 'hypervisor_version', 'host_ip', 'host', 'vcpus',
    'memory_mb', 'local_gb', 'vcpus_used', 'memory_mb_used', 'local_gb_used',
    'free_ram_mb', 'free_disk_gb', 'current_workload', 'running_vms',
    'disk_available_least', 'cpu_info', 'stats')


def _floor_queries(host):
    """Plain SELECTs returning the rows each listing returns."""
    service = models.Service.__table__
    node = models.ComputeNode.__table__
    services = (sa.select(*[service.c[name] for name in _SERVICE_COLUMNS])
                .where(service.c.deleted == 0,
                       service.c.binary.not_in(HIDDEN_BINARIES))
                .order_by(service.c.id))
    join = node.join(service, sa.and_(
        service.c.id == node.c.service_id, service.c.deleted == 0,
        service.c.binary == 'nova-compute'))
    status = (service.c.id.label('service_id'),
              service.c.uuid.label('service_uuid'), service.c.disabled,
              service.c.disabled_reason, service.c.forced_down,
              service.c.last_seen_up)

    def nodes(columns):
        return (sa.select(*[node.c[name] for name in columns], *status)
                .select_from(join).where(node.c.deleted == 0)
                .order_by(node.c.id))

    return {
        'services': services,
        'services_host': services.where(service.c.host == host),
        'summary': nodes(_NODE_SUMMARY_COLUMNS),
        'detail': nodes(_NODE_DETAIL_COLUMNS),
        'detail_page': nodes(_NODE_DETAIL_COLUMNS),
    }


def measure_floor(engine, query, iterations, budget):
    """One plain query on a DB-API cursor, rows to dicts, json.dumps."""
    sql = str(query.compile(dialect=engine.dialect,
                            compile_kwargs={'literal_binds': True}))
    raw = engine.raw_connection()
    try:
        def run():
            cursor = raw.cursor()
            cursor.execute(sql)
            names = [column[0] for column in cursor.description]
            rows = [dict(zip(names, row)) for row in cursor.fetchall()]
            cursor.close()
            raw.rollback()
            return json.dumps({'items': rows}, default=str)
        size = len(run())
        return _timed(run, iterations, budget), size
    finally:
        raw.close()


def measure_listings(port, engine, host, iterations, budget):
    results = {}
    floors = {}
    queries = _floor_queries(host)
    client = Client(port)
    try:
        for name, path, version, floor_name in LISTINGS:
            path = path % {'host': host}
            status, statements, body = client.request('GET', path, version)
            if status != 200:
                raise RuntimeError('GET %s at %s: %s %s'
                                   % (path, version, status, body[:300]))
            items = json.loads(body)
            items = next(value for key, value in items.items()
                         if isinstance(value, list))

            def get():
                answer = client.request('GET', path, version)
                if answer[0] != 200:
                    raise RuntimeError('GET %s failed: %s' % (path,
                                                              answer[0]))
            times = _timed(get, iterations, budget)
            key = (floor_name, len(items))
            if key not in floors:
                # The same rows: pages of 2.33+ hold at most max_limit.
                floors[key] = measure_floor(
                    engine, queries[floor_name].limit(len(items)),
                    iterations, budget)
            floor_times, floor_bytes = floors[key]
            median = statistics.median(times)
            floor_median = statistics.median(floor_times)
            results[name] = {
                'path': path, 'version': version, 'rows': len(items),
                'bytes': len(body), 'runs': len(times),
                'statements': statements,
                'median_ms': _ms(median), 'p95_ms': _ms(
                    _percentile(times, 0.95)),
                'floor_median_ms': _ms(floor_median),
                'floor_p95_ms': _ms(_percentile(floor_times, 0.95)),
                'ratio_to_floor': round(median / floor_median, 2),
            }
    finally:
        client.close()
    return results


def _force_down_request(uuids, version, index, down):
    host = _host(index)
    if version == '2.11':
        return ('PUT', '/os-services/force-down',
                {'host': host, 'binary': 'nova-compute', 'forced_down': down})
    return ('PUT', '/os-services/%s' % uuids[host], {'forced_down': down})


def _timed_request(client, request, latencies, failures):
    """Send (method, path, version, body); record its latency or failure.

    Returns the SQL statement count the server answered, or None.
    """
    start = time.perf_counter()
    try:
        status, count, payload = client.request(*request)
    except (OSError, http.client.HTTPException) as exc:
        failures.append(repr(exc))
        return None
    latencies.append(time.perf_counter() - start)
    if status != 200:
        failures.append('%s %s' % (status, payload[:200]))
    return count


def _force_down_loop(port, uuids, version, indexes, deadline=None):
    """Force each host down then up again; (latencies, failures, count)."""
    client = Client(port)
    latencies, failures, statements = [], [], set()
    try:
        for index in indexes:
            if deadline is not None and time.monotonic() > deadline:
                break
            for down in (True, False):
                method, path, body = _force_down_request(uuids, version,
                                                         index, down)
                statements.add(_timed_request(
                    client, (method, path, version, body), latencies,
                    failures))
    finally:
        client.close()
    return latencies, failures, statements


def measure_force_down(port, uuids, hosts, sequential, concurrent_each,
                       sustain_seconds):
    results = {}
    for version in ('2.11', '2.53'):
        indexes = [1 + (i * 7) % hosts for i in range(sequential)]
        latencies, failures, statements = _force_down_loop(
            port, uuids, version, indexes)
        results['force-down %s sequential' % version] = _latency_summary(
            latencies, failures, statements, elapsed=None)

        # 8 clients, each on its own hosts, all at once.
        def chunk(client):
            return [1 + (client + CLIENTS * i) % hosts
                    for i in range(concurrent_each)]
        start = time.perf_counter()
        with concurrent.futures.ThreadPoolExecutor(CLIENTS) as pool:
            outcomes = list(pool.map(
                lambda c: _force_down_loop(port, uuids, version, chunk(c)),
                range(CLIENTS)))
        elapsed = time.perf_counter() - start
        results['force-down %s 8 clients' % version] = _latency_summary(
            [value for outcome in outcomes for value in outcome[0]],
            [value for outcome in outcomes for value in outcome[1]],
            set().union(*[outcome[2] for outcome in outcomes]), elapsed)

    # Sustained: 8 clients at 2.53 for a fixed time.
    deadline = time.monotonic() + sustain_seconds
    start = time.perf_counter()
    with concurrent.futures.ThreadPoolExecutor(CLIENTS) as pool:
        outcomes = list(pool.map(
            lambda c: _force_down_loop(
                port, uuids, '2.53',
                (1 + (c + CLIENTS * i) % hosts for i in itertools.count()),
                deadline),
            range(CLIENTS)))
    elapsed = time.perf_counter() - start
    results['force-down 2.53 sustained 8 clients'] = _latency_summary(
        [value for outcome in outcomes for value in outcome[0]],
        [value for outcome in outcomes for value in outcome[1]],
        set().union(*[outcome[2] for outcome in outcomes]), elapsed)
    return results


def _latency_summary(latencies, failures, statements, elapsed):
    summary = {
        'requests': len(latencies) + sum(1 for failure in failures
                                         if failure.startswith(('Connection',
                                                                'Remote'))),
        'failures': len(failures),
        'failure_examples': sorted(set(failures))[:3],
        'statements': sorted(s for s in statements if s is not None),
        'median_ms': _ms(statistics.median(latencies)) if latencies else None,
        'p99_ms': _ms(_percentile(latencies, 0.99)),
    }
    if elapsed:
        summary['per_second'] = round(len(latencies) / elapsed, 1)
    return summary


def _heartbeat_worker(url, process, processes, threads, seconds, batch):
    """One agent process: heartbeats of its share of the computes.

    Each thread reports ``batch`` services at a time, with report_state
    when that is one. Returns (heartbeats, failures, seconds).
    """
    logging.getLogger('nova_forcedown').setLevel(logging.ERROR)
    conf = nf_conf.make_conf([], default_config_files=[],
                             default_config_dirs=[])
    conf.set_override('connection', url, group='database')
    manager = db_api.context_manager.make_new_manager()
    db_api.configure(conf, manager)
    reset = db_api.context_manager.patch_factory(manager)
    try:
        ctxt = nf_context.get_admin_context()
        services = list(service_obj.ServiceList.get_all(
            ctxt, binary='nova-compute'))[process::processes]
        counts, failures = [0] * threads, []
        deadline = time.monotonic() + seconds

        def beat(worker):
            mine = services[worker::threads]
            chunks = [mine[first:first + batch]
                      for first in range(0, len(mine), batch)]
            for chunk in itertools.cycle(chunks):
                if time.monotonic() > deadline:
                    return
                try:
                    if batch == 1:
                        db_driver.DbDriver.report_state(chunk[0])
                    else:
                        db_driver.DbDriver.report_states(chunk)
                    counts[worker] += len(chunk)
                except Exception as exc:  # noqa: counted, not fatal
                    failures.append(repr(exc))
        start = time.perf_counter()
        workers = [threading.Thread(target=beat, args=(worker,))
                   for worker in range(threads)]
        for worker in workers:
            worker.start()
        for worker in workers:
            worker.join()
        return sum(counts), failures, time.perf_counter() - start
    finally:
        reset()
        manager.writer.get_engine().dispose()


def measure_heartbeats(url, processes, threads, seconds, batch=1):
    """The DB driver's heartbeats of the N computes, as agents send them.

    Heartbeats come from many agent processes; here ``processes`` processes
    of ``threads`` threads each share the computes and report in a loop for
    ``seconds``, ``batch`` services per call.
    """
    context = multiprocessing.get_context('fork')
    with concurrent.futures.ProcessPoolExecutor(
            processes, mp_context=context) as pool:
        outcomes = list(pool.map(
            _heartbeat_worker, [url] * processes, range(processes),
            [processes] * processes, [threads] * processes,
            [seconds] * processes, [batch] * processes))
    total = sum(outcome[0] for outcome in outcomes)
    failures = [failure for outcome in outcomes for failure in outcome[1]]
    elapsed = max(outcome[2] for outcome in outcomes)
    return {'processes': processes, 'threads': threads, 'batch': batch,
            'heartbeats': total,
            'seconds': round(elapsed, 2),
            'per_second': round(total / elapsed, 1),
            'failures': len(failures),
            'failure_examples': sorted(set(failures))[:3]}


class SlowClients(threading.Thread):
    """Connections that hold a request open without ever finishing it.

    Half send their headers one byte a second; half send complete headers
    with ``Content-Length: 1000`` and one byte of body, then nothing. A
    connection the server closes is opened again at once, so ``count`` stay
    open for as long as this runs.
    """

    STALLED = (b'PUT /v2.1/os-services/disable HTTP/1.1\r\nHost: bench\r\n'
               b'X-Auth-Token: ' + TOKEN.encode() + b'\r\n'
               b'Content-Type: application/json\r\n'
               b'Content-Length: 1000\r\n\r\n{')
    DRIBBLE = b'GET /v2.1/os-services HTTP/1.1\r\nX-Padding: ' + b'a' * 60000

    def __init__(self, port, count):
        super().__init__(daemon=True)
        self.port = port
        self.count = count
        self.reopened = 0
        self._done = threading.Event()
        self._selector = selectors.DefaultSelector()
        self._sent = {}

    def _open(self, number):
        sock = socket.create_connection(('127.0.0.1', self.port))
        sock.setblocking(False)
        if number % 2:
            sock.send(self.STALLED)
        self._sent[sock] = 0
        self._selector.register(sock, selectors.EVENT_READ, number)

    def _reopen_closed(self):
        for key, _ in self._selector.select(timeout=0):
            try:
                if key.fileobj.recv(65536):
                    continue
            except OSError:
                pass
            self._selector.unregister(key.fileobj)
            del self._sent[key.fileobj]
            key.fileobj.close()
            self.reopened += 1
            self._open(key.data)

    def _dribble(self):
        for key in list(self._selector.get_map().values()):
            if key.data % 2 == 0:
                sent = self._sent[key.fileobj]
                try:
                    key.fileobj.send(self.DRIBBLE[sent:sent + 1])
                    self._sent[key.fileobj] = sent + 1
                except OSError:
                    pass

    def run(self):
        for number in range(self.count):
            self._open(number)
        while not self._done.wait(1.0):
            self._reopen_closed()
            self._dribble()

    def stop(self):
        self._done.set()
        self.join()
        for key in list(self._selector.get_map().values()):
            key.fileobj.close()


def _mixed_load_client(port, uuids, hosts, client, deadline):
    """List services, force a host down and up again, until ``deadline``."""
    connection = Client(port)
    latencies, failures = [], []
    try:
        for index in itertools.count():
            if time.monotonic() > deadline:
                break
            host_index = 1 + (client + CLIENTS * index) % hosts
            requests = [('GET', '/os-services', None, None)] + [
                (method, path, '2.53', body) for method, path, body in (
                    _force_down_request(uuids, '2.53', host_index, down)
                    for down in (True, False))]
            for request in requests:
                _timed_request(connection, request, latencies, failures)
    finally:
        connection.close()
    return latencies, failures


def measure_slow_clients(port, uuids, hosts, slow_count, seconds):
    """8 clients of mixed load, without and then beside slow connections."""
    results = {}
    for label, count in (('without', 0), ('with', slow_count)):
        holder = SlowClients(port, count)
        holder.start()
        try:
            time.sleep(1.0 if count else 0)
            deadline = time.monotonic() + seconds
            start = time.perf_counter()
            with concurrent.futures.ThreadPoolExecutor(CLIENTS) as pool:
                outcomes = list(pool.map(
                    lambda c: _mixed_load_client(port, uuids, hosts, c,
                                                 deadline),
                    range(CLIENTS)))
            elapsed = time.perf_counter() - start
        finally:
            holder.stop()
        summary = _latency_summary(
            [value for outcome in outcomes for value in outcome[0]],
            [value for outcome in outcomes for value in outcome[1]],
            set(), elapsed)
        summary.update(seconds=round(elapsed, 1), slow_connections=count,
                       reopened_by_server_close=holder.reopened)
        results[label] = summary
    results['p99_ratio'] = round(
        results['with']['p99_ms'] / results['without']['p99_ms'], 2)
    return results


# ------------------------------------------------------------- reporting

def machine():
    model = 'unknown'
    with open('/proc/cpuinfo') as cpuinfo:
        for line in cpuinfo:
            if line.startswith('model name'):
                model = line.split(':', 1)[1].strip()
                break
    return {'nproc': os.cpu_count(), 'cpu_model': model,
            'memory_mb': psutil.virtual_memory().total // 2 ** 20,
            'python': platform.python_version(),
            'kernel': platform.release()}


def print_table(report, out=sys.stdout):
    runs = report['runs']
    width, col = 38, 34

    def line(label, cells):
        out.write(label.ljust(width) +
                  ''.join(cell.rjust(col) for cell in cells) + '\n')

    out.write('\nnova-forcedown benchmark: %s, %d API workers x %d threads, '
              '%s CPUs (%s), %s MB\n' % (
                  report['backend'], report['workers'], report['threads'],
                  report['machine']['nproc'], report['machine']['cpu_model'],
                  report['machine']['memory_mb']))
    line('hosts', ['%d' % run['hosts'] for run in runs])
    out.write('listings: rows  median/p95 ms  [floor median ms, '
              'x floor]  {SQL statements}\n')
    for name, _, _, _ in LISTINGS:
        line(name, ['%d  %s/%s [%s, x%.1f] {%s}' % (
            item['rows'], _short(item['median_ms']), _short(item['p95_ms']),
            _short(item['floor_median_ms']), item['ratio_to_floor'],
            item['statements'])
            for item in (run['listings'][name] for run in runs)])
    out.write('force-down: median/p99 ms  rate/s  failures  '
              '{SQL statements}\n')
    for name in runs[0]['force_down']:
        line(name, ['%s/%s%s f=%d {%s}' % (
            _short(item['median_ms']), _short(item['p99_ms']),
            ' %s/s' % item['per_second'] if 'per_second' in item else '',
            item['failures'], ','.join(map(str, item['statements'])))
            for item in (run['force_down'][name] for run in runs)])
    slow = runs[0].get('slow_clients')
    if slow:
        out.write('slow clients at %d hosts, 8 clients listing and forcing '
                  'down for %.0f s:\n' % (runs[0]['hosts'],
                                          slow['with']['seconds']))
        for label in ('without', 'with'):
            item = slow[label]
            out.write('  %3d slow connections: %d requests, %d failures, '
                      'median/p99 %s/%s ms, %s/s, %d closed by the server\n'
                      % (item['slow_connections'], item['requests'],
                         item['failures'], _short(item['median_ms']),
                         _short(item['p99_ms']), item['per_second'],
                         item['reopened_by_server_close']))
        out.write('  p99 with / without: x%.2f\n' % slow['p99_ratio'])
    line('heartbeats report_state/s (fail)', ['%s (%d)' % (
        run['heartbeats']['per_second'], run['heartbeats']['failures'])
        for run in runs])
    line('  batched, %d hosts per call' % runs[0]['heartbeats_batched'][
        'batch'], ['%s (%d)' % (run['heartbeats_batched']['per_second'],
                                run['heartbeats_batched']['failures'])
                   for run in runs])
    line('API peak RSS MB: sum (largest proc)', ['%.0f (%.0f)' % (
        run['rss']['peak_sum_mb'], run['rss']['peak_process_mb'])
        for run in runs])
    line('seconds for this host count', ['%s' % run['seconds']
                                         for run in runs])


def _short(value):
    if value is None:
        return '-'
    return ('%.1f' % value) if value < 100 else ('%.0f' % value)


# ------------------------------------------------------------------ main

def run_one(args, hosts):
    started = time.monotonic()
    database = Database(args.db_url)
    server = None
    engine = sa.create_engine(database.url, poolclass=sa.pool.NullPool)
    try:
        migration.db_sync(engine)
        uuids = seed(engine, hosts)
        server = Server(database, args.workers, args.threads)
        server.start()
        sampler = RssSampler(server)
        sampler.start()
        try:
            listings = measure_listings(server.port, engine,
                                        _host(hosts // 2), args.iterations,
                                        args.budget)
            force_down = measure_force_down(
                server.port, uuids, hosts, args.sequential, args.concurrent,
                args.sustain)
            slow = None
            if args.slow_clients and hosts == args.hosts[0]:
                slow = measure_slow_clients(server.port, uuids, hosts,
                                            args.slow_clients,
                                            args.slow_seconds)
        finally:
            sampler.stop()
        server.stop()
        senders = (database.url_text, args.heartbeat_processes,
                   args.heartbeat_threads, args.heartbeat_seconds)
        heartbeats = measure_heartbeats(*senders)
        batched = measure_heartbeats(*senders, batch=args.heartbeat_batch)
        return {
            'hosts': hosts, 'listings': listings, 'force_down': force_down,
            'slow_clients': slow,
            'heartbeats': heartbeats, 'heartbeats_batched': batched,
            'rss': {'peak_sum_mb': round(sampler.peak_sum / 2 ** 20, 1),
                    'peak_process_mb': round(sampler.peak_process / 2 ** 20,
                                             1)},
            'seconds': round(time.monotonic() - started, 1),
        }
    except Exception:
        if server is not None and server.process is not None:
            sys.stderr.write(server.log())
        raise
    finally:
        if server is not None:
            server.stop()
        engine.dispose()
        database.drop()


def parse_args(argv):
    parser = argparse.ArgumentParser(description=__doc__.split('\n\n')[0])
    parser.add_argument('--hosts', default='1000,5000,10000',
                        help='comma-separated host counts')
    parser.add_argument('--db-url', help='a database server to create a '
                        'fresh database on (default: a temporary SQLite '
                        'file), e.g. postgresql+psycopg2://postgres@'
                        '127.0.0.1/postgres')
    parser.add_argument('--json', help='write the figures to this file')
    parser.add_argument('--workers', type=int, default=2,
                        help='API worker processes (default 2)')
    parser.add_argument('--threads', type=int, default=8,
                        help='threads per API worker (default 8)')
    parser.add_argument('--iterations', type=int, default=20,
                        help='requests per listing at most (default 20)')
    parser.add_argument('--budget', type=float, default=6.0,
                        help='seconds per listing at most, 3 requests at '
                             'least (default 6)')
    parser.add_argument('--sequential', type=int, default=150,
                        help='hosts forced down and up again one after '
                             'another, per microversion (default 150)')
    parser.add_argument('--concurrent', type=int, default=40,
                        help='hosts per client with 8 clients (default 40)')
    parser.add_argument('--sustain', type=float, default=5.0,
                        help='seconds of the sustained force-down run')
    parser.add_argument('--slow-clients', type=int, default=300,
                        help='slow or stalled connections held open beside '
                             '8 clients of mixed load, at the first host '
                             'count (default 300; 0 skips this run)')
    parser.add_argument('--slow-seconds', type=float, default=60.0,
                        help='seconds of mixed load, once without and once '
                             'with the slow connections (default 60)')
    parser.add_argument('--heartbeat-processes', type=int, default=2,
                        help='agent processes sending heartbeats (default 2)')
    parser.add_argument('--heartbeat-threads', type=int, default=4,
                        help='threads per agent process (default 4)')
    parser.add_argument('--heartbeat-seconds', type=float, default=5.0)
    parser.add_argument('--heartbeat-batch', type=int, default=100,
                        help='hosts per agent in the batched heartbeat run '
                             '(default 100)')
    args = parser.parse_args(argv)
    args.hosts = [int(value) for value in args.hosts.split(',') if value]
    return args


def main(argv=None):
    args = parse_args(sys.argv[1:] if argv is None else argv)
    objects.register_all()
    # The heartbeats of forced-down hosts warn each time; not news here.
    logging.getLogger('nova_forcedown').setLevel(logging.ERROR)
    report = {'backend': sa.engine.make_url(args.db_url).get_backend_name()
              if args.db_url else 'sqlite',
              'workers': args.workers, 'threads': args.threads,
              'machine': machine(),
              'date': datetime.datetime.utcnow().strftime('%Y-%m-%d %H:%M'),
              'runs': []}
    for hosts in args.hosts:
        print('%d hosts...' % hosts, file=sys.stderr, flush=True)
        report['runs'].append(run_one(args, hosts))
    print_table(report)
    if args.json:
        with open(args.json, 'w') as output:
            json.dump(report, output, indent=2, sort_keys=True)
    return 0


if __name__ == '__main__':
    sys.exit(main())
