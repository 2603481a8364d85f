"""No false fence on real Nova: the monitor beside a cloud whose parts fail.

    python -m tools.benchmark.monitor_soak_nova [--minutes 30] [--seed N]

A real OpenStack Nova 34 cloud (tests/fixtures/real_nova.py: three
nova-compute hosts on Nova's fake driver, report_interval 5 s,
service_down_time 20 s), a server on each host, each host's pulse and the
monitors' leader lock in a Redis of its own, simulated BMCs, and
``nova-forcedown-monitor`` as an operator configures it. Until the time
is up, one disruption after another, each lasting 3 to 8 s (a
nova-compute restart lasts 25 s, so that Nova calls its host down), then
5 to 15 s of calm: a nova-compute killed and started again, Redis stopped
and started again empty, Nova's databases cut at a TCP proxy (connections
reset, or a black hole) and restored, the BMCs stopped (a black hole) and
continued, the monitor killed and started again. No host is ever switched
off, so every fence would be a false one.

Prints what was done, then what Nova says at the end: the services the
monitor forced down (must be none), the evacuations (must be none), each
server on its one host, ACTIVE.
"""

import argparse
import json
import random
import signal
import sys
import time

import fixtures

from tests.fixtures import processes
from tests.fixtures import real_nova
from tests.fixtures import redis_servers
from tests.fixtures import tcp_proxy
from tools.benchmark import disruptions

FENCED = 'nova-forcedown-monitor: fenced'
# Long enough for Nova to call a host down (service_down_time 20 s).
COMPUTE_DOWN_FOR = 25


def _arguments(argv):
    parser = argparse.ArgumentParser(prog='monitor_soak_nova')
    parser.add_argument('--minutes', type=float, default=30)
    parser.add_argument('--seed', type=int, default=None)
    return parser.parse_args(argv)


class Soak(fixtures.Fixture, disruptions.Disruptions):

    def __init__(self, randomness):
        fixtures.Fixture.__init__(self)
        disruptions.Disruptions.__init__(self, randomness)

    def _setUp(self):
        self.redis = self.useFixture(redis_servers.RedisServer())
        url = redis_servers.backend_url(self.redis.port, 'soak')
        self.nova = self.useFixture(real_nova.RealNova(pulse_url=url,
                                                       database_proxy=True))
        directory = self.useFixture(fixtures.TempDir()).path
        self.config = processes.write_config(
            directory, self.nova.monitor_config(directory, url))
        self.servers = [server for host in self.nova.hosts
                        for server in self.nova.boot_servers(host)]
        self.monitors = [self._start_monitor()]

    def _start_monitor(self):
        return self.useFixture(processes.Process([
            processes.script('nova-forcedown-monitor'), '--config-file',
            self.config]))

    def compute_restart(self):
        host = self.random.choice(self.nova.hosts)
        self.nova.kill_compute(host)
        time.sleep(COMPUTE_DOWN_FOR)
        self.nova.start_compute(host)

    def redis_blip(self):
        self.redis.stop()
        self.pause()
        self.redis.start()

    def bmc_black_hole(self):
        self.nova.bmc_process.process.send_signal(signal.SIGSTOP)
        try:
            self.pause()
        finally:
            self.nova.bmc_process.process.send_signal(signal.SIGCONT)

    def monitor_restart(self):
        self.monitors[-1].stop(signal.SIGKILL)
        self.pause()
        self.monitors.append(self._start_monitor())

    def database_blip(self):
        """Nova's databases cut at the proxy: reset, or a black hole."""
        self.nova.database_proxy.cut(self.random.choice(
            (tcp_proxy.RESET, tcp_proxy.BLACKHOLE)))
        try:
            self.pause()
        finally:
            self.nova.database_proxy.restore()

    def kinds(self):
        return (self.compute_restart, self.redis_blip, self.database_blip,
                self.bmc_black_hole, self.monitor_restart)

    def restart_exited_computes(self):
        """Start again a nova-compute that exited, as systemd would.

        Nova 34's nova-compute exits at start when the conductor cannot
        reach the database (a blip during its restart).
        """
        for host in self.nova.hosts:
            if not self.nova.compute_running(host):
                self.nova.start_compute(host)
                self.done['compute_exited_and_restarted'] += 1

    def after_each(self):
        self.restart_exited_computes()

    def verdict(self):
        """What Nova says once every host is up again (or after 120 s)."""
        self.restart_exited_computes()
        try:
            self.nova.wait_for_states(
                {host: 'up' for host in self.nova.hosts}, timeout=120)
        except AssertionError as exc:
            print('not every host is up: %s' % str(exc).splitlines()[0],
                  file=sys.stderr)
        services = self.nova.services()
        evacuations = self.nova.compute.get(
            '/os-migrations?migration_type=evacuation',
            microversion='2.53').json()['migrations']
        servers = self.nova.servers()
        return {
            'fenced': sorted(
                host for host, service in services.items()
                if service['forced_down'] or FENCED in (
                    service['disabled_reason'] or '')),
            'evacuations': len(evacuations),
            'servers_active_on_their_host': sum(
                1 for server in self.servers
                if servers[server]['status'] == 'ACTIVE'),
            'servers': len(self.servers),
            'monitor_tracebacks': sum(monitor.output().count('Traceback')
                                      for monitor in self.monitors)}


def main(argv=None):
    args = _arguments(sys.argv[1:] if argv is None else argv)
    seed = args.seed if args.seed is not None else random.randrange(10000)
    soak = Soak(random.Random(seed))
    soak.setUp()
    try:
        started = time.monotonic()
        soak.run(args.minutes * 60)
        minutes = (time.monotonic() - started) / 60
        verdict = soak.verdict()
    finally:
        soak.cleanUp()
    print(json.dumps({'seed': seed, 'minutes': round(minutes, 1),
                      'disruptions': dict(soak.done), 'verdict': verdict},
                     indent=2))
    false_fences = verdict['fenced'] or verdict['evacuations']
    return 1 if false_fences else 0


if __name__ == '__main__':
    sys.exit(main())
