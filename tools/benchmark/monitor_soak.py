"""No false fence: the monitor watching a cloud whose parts keep failing.

    python -m tools.benchmark.monitor_soak [--minutes 30] [--seed N]

A cloud of five simulated hosts with BMCs (tests/fixtures/monitored_hosts.py)
on PostgreSQL behind a TCP proxy, liveness in a Redis of its own (the tooz
driver, whose memberships the monitor reads as the hosts' pulses), one
monitor and the API it acts through. Until the time is up, one disruption
after another, each lasting 3 to 8 s, then 5 to 15 s of calm: an agent
killed and started again, Redis stopped and started (empty), the database
cut at the proxy and restored, the monitor or the API killed and started
again. No host is ever switched off, so every fence would be a false one.
Prints what was done, the fences and force-downs found in the hosts'
histories at the end (both must be none), and what the API's os-services
says of the hosts then (all up, none forced down).
"""

import argparse
import collections
import json
import random
import signal
import sys
import time

from tests.fixtures import monitored_hosts
from tests.fixtures import processes
from tests.fixtures import redis_servers
from tests.fixtures import server_database
from tests.fixtures import tcp_proxy
from tools.benchmark import disruptions

RACKS = {'rack-a': 3, 'rack-b': 2}
# How the reason of the monitor's force-down starts, in a host's history.
FENCED = 'nova-forcedown-monitor: fenced'


def _arguments(argv):
    parser = argparse.ArgumentParser(prog='monitor_soak')
    parser.add_argument('--minutes', type=float, default=30)
    parser.add_argument('--seed', type=int, default=None)
    parser.add_argument('--logs', help='Keep the monitors\' logs in this '
                        'file.')
    return parser.parse_args(argv)


class Soak(disruptions.Disruptions):

    def __init__(self, randomness):
        super().__init__(randomness)
        self.database = server_database.ServerDatabase('postgresql')
        self.database.setUp()
        self.proxy = tcp_proxy.TCPProxy(self.database.url.port or 5432)
        self.proxy.setUp()
        self.redis = redis_servers.RedisServer()
        self.redis.setUp()
        self.cloud = monitored_hosts.MonitoredHosts(
            RACKS, more_config=(
                '[DEFAULT]\nservicegroup_driver = tooz\n'
                '[monitor]\npulse = true\n'
                '[coordination]\nbackend_url = %s\n'
                'database_report_interval = 2\n'
                % redis_servers.backend_url(self.redis.port, 'soak')),
            database_url=self.database.url_via(self.proxy.port))
        self.cloud.setUp()
        self.monitors = [self.cloud.start_monitor()]

    def close(self):
        for fixture in (self.cloud, self.redis, self.proxy, self.database):
            fixture.cleanUp()

    def _url(self, path):
        return 'http://127.0.0.1:%d%s' % (self.cloud.api_port, path)

    def agent_restart(self):
        rack = self.random.choice(self.cloud.racks)
        rack.agent.stop(signal.SIGKILL)
        self.pause()
        self.cloud.restart_agent(rack)

    def redis_blip(self):
        self.redis.stop()
        self.pause()
        self.redis.start()

    def database_blip(self):
        self.proxy.cut()
        self.pause()
        self.proxy.restore()

    def monitor_restart(self):
        self.monitors[-1].stop(signal.SIGKILL)
        self.pause()
        self.monitors.append(self.cloud.start_monitor())

    def api_restart(self):
        self.cloud.api.stop(signal.SIGKILL)
        self.pause()
        self.cloud.restart_api()

    def kinds(self):
        return (self.agent_restart, self.redis_blip, self.database_blip,
                self.monitor_restart, self.api_restart)

    def verdict(self):
        """(fences, hosts forced down, monitor lines that are tracebacks)."""
        time.sleep(5)
        fences = sum(self.cloud.history(host).count(FENCED)
                     for host in self.cloud.hosts)
        tracebacks = sum(monitor.output().count('Traceback')
                         for monitor in self.monitors)
        return fences, self.cloud.forced_down(), tracebacks

    def api_says(self):
        """What the API's os-services says of the hosts, once all are up.

        Or after 60 s: then it says which are not.
        """
        def services():
            status, body = processes.http_get(
                self._url('/v2.1/os-services?binary=nova-compute'),
                headers={'X-Auth-Token': 'admin:admin',
                         'OpenStack-API-Version': 'compute 2.11'})
            return json.loads(body)['services'] if status == 200 else []

        def all_up():
            found = services()
            return len(found) == len(self.cloud.hosts) and all(
                service['state'] == 'up' for service in found) and found
        found = processes.wait_until(all_up, timeout=60) or services()
        said = collections.Counter(
            '%s%s' % (service['state'],
                      ', forced down' if service['forced_down'] else '')
            for service in found)
        return ', '.join('%d %s' % (count, state)
                         for state, count in sorted(said.items()))


def main(argv=None):
    args = _arguments(sys.argv[1:] if argv is None else argv)
    seed = args.seed if args.seed is not None else random.randrange(10**6)
    soak = Soak(random.Random(seed))
    try:
        started = time.monotonic()
        soak.run(args.minutes * 60)
        fences, forced_down, tracebacks = soak.verdict()
        print('seed %d, %.1f minutes: %s' % (
            seed, (time.monotonic() - started) / 60, soak.said_done()))
        print('fences: %d; forced down: %s; tracebacks in the monitors\' '
              'logs: %d' % (fences, forced_down or 'none', tracebacks))
        print('the API\'s os-services then: %s' % soak.api_says())
        if args.logs:
            with open(args.logs, 'w') as logs:
                logs.writelines(monitor.output() for monitor in soak.monitors)
    finally:
        soak.close()
    return 0 if not fences and not forced_down else 1


if __name__ == '__main__':
    sys.exit(main())
