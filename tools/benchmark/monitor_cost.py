"""What the monitor costs the compute API and Redis while nothing fails.

    python -m tools.benchmark.monitor_cost [--hosts 1000 10000]
        [--seconds 30] [--interval 1]

For each host count: an SQLite database seeded with that many compute
hosts (tools/benchmark/seeding.py: every 25th down for an hour, every 10th
disabled, every 50th forced down), nova-forcedown-api's server on it
(tools/benchmark/server.py), a private Redis for the leader lock, and the
monitor's loop (manager.Monitor, as the command runs it, in this process,
so that its requests can be counted) looking every ``--interval`` seconds
for ``--seconds``, through keystoneauth1 as the command does. The hosts
have no BMC: the down ones are judged (their BMC cannot be read, so not
fenced), as a cloud's few dead hosts are. The pulses are off: they would
add one membership read of the backend per look.

Prints, per host count, the requests a second sent to the compute API,
the commands a second Redis ran, and the looks' durations (p50, p99); and
the ratio of the largest host count's requests a second to the smallest's
(goal: 1, the requests do not grow with the host count).
"""

import argparse
import json
import statistics
import sys
import time

import sqlalchemy as sa

from nova_forcedown import conf as nf_conf
from nova_forcedown.db import schema
from nova_forcedown.monitor import compute_api
from nova_forcedown.monitor import leadership
from nova_forcedown.monitor import manager
from tests.fixtures import processes
from tests.fixtures import redis_servers
from tools.benchmark import seeding
from tools.benchmark import server as api_server


def _arguments(argv):
    parser = argparse.ArgumentParser(prog='monitor_cost')
    parser.add_argument('--hosts', type=int, nargs='+',
                        default=[1000, 10000])
    parser.add_argument('--seconds', type=float, default=30)
    parser.add_argument('--interval', type=float, default=1.0)
    return parser.parse_args(argv)


class CountedAdapter:
    """A keystoneauth1 adapter that counts its requests."""

    def __init__(self, adapter):
        self._adapter = adapter
        self.requests = 0

    def __getattr__(self, name):
        return getattr(self._adapter, name)

    def request(self, *args, **kwargs):
        self.requests += 1
        return self._adapter.request(*args, **kwargs)


class TimedMonitor(manager.Monitor):
    """The monitor's loop, each look's duration kept."""

    def __init__(self, *args, **kwargs):
        super().__init__(*args, **kwargs)
        self.looks = []

    def look(self):
        started = time.monotonic()
        try:
            return super().look()
        finally:
            self.looks.append(time.monotonic() - started)


def one_count(args, hosts, redis):
    database = seeding.Database()
    engine = sa.create_engine(database.url)
    try:
        schema.db_sync(engine)
        seeding.seed(engine, hosts)
        api = api_server.Server(database, workers=1, threads=4, options={
            # Seeded hosts stay up for the run; the stale ones are down.
            'DEFAULT': {'service_down_time': 600}})
        with api.serving():
            return _measure(args, database, api, redis)
    finally:
        engine.dispose()
        database.drop()


def _measure(args, database, api, redis):
    lock_url = redis_servers.backend_url(redis.port, 'cost-%d' % api.port)
    config = processes.write_config(database.directory, (
        '[DEFAULT]\nstate_path = %s\n'
        '[compute_api]\nauth_type = admin_token\ntoken = admin:admin\n'
        'endpoint = http://127.0.0.1:%d/v2.1\n'
        '[monitor]\ninterval = %s\nbmc_check_interval = 0\n'
        'coordination_url = %s\n'
        % (database.directory, api.port, args.interval, lock_url)))
    conf = nf_conf.make_conf(['--config-file', config])
    client = compute_api.from_conf(conf,
                                   compute_api.EVACUATE_ACTIVE_VERSION)
    counted = CountedAdapter(client._adapter)
    client._adapter = counted
    leader = leadership.Leadership(
        lock_url, lifetime=conf.monitor.leader_timeout).start()
    monitor = TimedMonitor(conf, client, leader)
    try:
        monitor.start()
        # The first looks warm the API and the connections up.
        processes.wait_until(lambda: len(monitor.looks) >= 3, timeout=120)
        requests, commands = counted.requests, redis.commands()
        started = time.monotonic()
        looks_before = len(monitor.looks)
        time.sleep(args.seconds)
        elapsed = time.monotonic() - started
        requests = counted.requests - requests
        commands = redis.commands() - commands
        looks = monitor.looks[looks_before:]
    finally:
        monitor.stop(5)
        leader.stop()
    return {'api_requests_per_s': round(requests / elapsed, 2),
            # INFO, which reads the count, is one of them.
            'redis_commands_per_s': round((commands - 1) / elapsed, 2),
            'looks': len(looks),
            'look_ms_p50': round(statistics.median(looks) * 1000, 1),
            'look_ms_p99': round(sorted(looks)[
                max(0, int(len(looks) * 0.99) - 1)] * 1000, 1)}


def main(argv=None):
    args = _arguments(sys.argv[1:] if argv is None else argv)
    redis = redis_servers.RedisServer()
    redis.setUp()
    try:
        figures = {hosts: one_count(args, hosts, redis)
                   for hosts in args.hosts}
    finally:
        redis.cleanUp()
    smallest, largest = min(args.hosts), max(args.hosts)
    report = {
        'interval_s': args.interval, 'seconds': args.seconds,
        'by_hosts': figures,
        'requests_ratio_largest_to_smallest': round(
            figures[largest]['api_requests_per_s'] /
            figures[smallest]['api_requests_per_s'], 2)}
    print(json.dumps(report, indent=2))
    return 0


if __name__ == '__main__':
    sys.exit(main())
