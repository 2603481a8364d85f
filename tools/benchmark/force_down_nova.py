"""A force-down, one at a time, on real Nova and on nova-forcedown, in one run.

    .tox/realnova/bin/python -m tools.benchmark.force_down_nova
        [--requests 200] [--hosts 1000] [--db-url URL ...]

One real OpenStack Nova 34 cloud (tests/fixtures/real_nova.py: Keystone,
nova-api under gunicorn, three nova-compute hosts on Nova's fake driver)
and, after it, nova-forcedown's API as the benchmark runs it (gunicorn,
2 workers of 8 threads, noauth2) on a cloud of ``--hosts`` seeded hosts,
on a temporary SQLite file and on each ``--db-url``. The same client (one
keep-alive http.client connection, a Keystone token for Nova) forces a
host down and up again, ``--requests`` times at 2.11 (``PUT
/os-services/force-down``) and at 2.53 (``PUT /os-services/{uuid}``).
nova-forcedown keeps its service history (always) and runs with the
fence-storm guard on (``[fencing] max_forced_down_fraction = 1.0``: it
reads and locks the zone's hosts at each force-down, and refuses none).

Nova's cost of a force-down does not grow with its services (one lookup
of the host's cell, one indexed read and write there), so its three hosts
stand for any number. Prints each median and p99 and the ratio of Nova's
median to nova-forcedown's: how many times Nova's sequential rate.
"""

import argparse
import http.client
import json
import statistics
import sys
import time
import urllib.parse

import sqlalchemy as sa

from nova_forcedown.db import schema
from tests.fixtures import real_nova
from tools.benchmark import clients
from tools.benchmark import latencies
from tools.benchmark import seeding
from tools.benchmark import server

VERSIONS = ('2.11', '2.53')
# The guard on, refusing nothing.
GUARD_FRACTION = '1.0'


def _arguments(argv):
    parser = argparse.ArgumentParser(prog='force_down_nova')
    parser.add_argument('--requests', type=int, default=200,
                        help='force-downs (each followed by a force-up) '
                             'per microversion and cloud (default 200)')
    parser.add_argument('--hosts', type=int, default=1000,
                        help="nova-forcedown's seeded hosts (default 1000)")
    parser.add_argument('--db-url', action='append', default=[],
                        help='a database server for nova-forcedown, as the '
                             'benchmark takes it; SQLite is always run')
    return parser.parse_args(argv)


class NovaClient:
    """One keep-alive connection to Nova's compute API, with a token."""

    def __init__(self, compute_url, token):
        url = urllib.parse.urlsplit(compute_url)
        self.prefix = url.path
        self.connection = http.client.HTTPConnection(url.hostname, url.port,
                                                     timeout=120)
        self.token = token

    def request(self, method, path, version, body):
        headers, data = clients.request_parts(version, body)
        headers['X-Auth-Token'] = self.token
        self.connection.request(method, self.prefix + path, body=data,
                                headers=headers)
        response = self.connection.getresponse()
        return response.status, response.read()

    def close(self):
        self.connection.close()


def _timed_pairs(send, requests_of):
    """Latencies of each (down, up) pair's requests; failures listed."""
    times, failures = [], []
    for request in requests_of():
        started = time.perf_counter()
        status, payload = send(*request)
        times.append(time.perf_counter() - started)
        if status != 200:
            failures.append('%s %s' % (status, payload[:200]))
    return times, failures


def _figures(times, failures):
    return {'median_ms': latencies.ms(statistics.median(times)),
            'p99_ms': latencies.ms(latencies.percentile(times, 0.99)),
            'requests': len(times), 'failures': len(failures),
            'failure_examples': failures[:3]}


def _requests(uuids, names, version, count):
    """(method, path, version, body) forcing each host down, then up."""
    for index in range(count):
        name = names[index % len(names)]
        for down in (True, False):
            if version == '2.11':
                yield ('PUT', '/os-services/force-down', version,
                       {'host': name, 'binary': 'nova-compute',
                        'forced_down': down})
            else:
                yield ('PUT', '/os-services/%s' % uuids[name], version,
                       {'forced_down': down})


def measure_nova(count):
    cloud = real_nova.RealNova()
    cloud.setUp()
    try:
        services = cloud.services()
        uuids = {host: service['id'] for host, service in services.items()}
        client = NovaClient(cloud.compute_url, cloud.session.get_token())
        try:
            return {version: _figures(*_timed_pairs(
                client.request,
                lambda: _requests(uuids, sorted(uuids), version, count)))
                for version in VERSIONS}
        finally:
            client.close()
    finally:
        cloud.cleanUp()


def measure_ours(db_url, hosts, count):
    database = seeding.Database(db_url)
    engine = sa.create_engine(database.url, poolclass=sa.pool.NullPool)
    try:
        schema.db_sync(engine)
        uuids = seeding.seed(engine, hosts)
        names = [seeding.host_name(1 + (index * 7) % hosts)
                 for index in range(count)]
        api = server.Server(database, workers=2, threads=8, options={
            'fencing': {'max_forced_down_fraction': GUARD_FRACTION}})
        with api.serving():
            client = clients.Client(api.port)
            try:
                def send(method, path, version, body):
                    status, _, payload = client.request(method, path,
                                                        version, body)
                    return status, payload
                return {version: _figures(*_timed_pairs(
                    send, lambda: _requests(uuids, names, version, count)))
                    for version in VERSIONS}
            finally:
                client.close()
    finally:
        engine.dispose()
        database.drop()


def main(argv=None):
    args = _arguments(sys.argv[1:] if argv is None else argv)
    report = {'nova': measure_nova(args.requests)}
    for db_url in [None] + args.db_url:
        backend = ('sqlite' if db_url is None
                   else sa.engine.make_url(db_url).get_backend_name())
        report[backend] = measure_ours(db_url, args.hosts, args.requests)
    _print(report, args)
    return 0


def _print(report, args):
    nova = report['nova']
    sys.stdout.write(
        '\nforce-down one at a time, %d down and %d up per microversion; '
        'nova-forcedown with %d hosts\n'
        % (args.requests, args.requests, args.hosts))
    for cloud, figures in report.items():
        for version in VERSIONS:
            item = figures[version]
            ratio = ('' if cloud == 'nova' else '  x%.1f Nova\'s rate' % (
                nova[version]['median_ms'] / item['median_ms']))
            sys.stdout.write('  %-10s %s: median/p99 %s/%s ms, %d failed%s\n'
                             % (cloud, version, item['median_ms'],
                                item['p99_ms'], item['failures'], ratio))
    sys.stdout.write(json.dumps(report, indent=1) + '\n')


if __name__ == '__main__':
    sys.exit(main())
