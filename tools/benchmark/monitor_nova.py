"""From a host's power-off to its servers ACTIVE elsewhere, on real Nova.

    python -m tools.benchmark.monitor_nova [--runs 10] [--servers 10]
        [--baseline-runs 3]

One real OpenStack Nova 34 cloud (tests/fixtures/real_nova.py: three
nova-compute hosts on Nova's fake driver, report_interval 5 s,
service_down_time 20 s), each host with a simulated BMC and a pulse into
Redis (TTL 2 s, every 0.5 s), and ``nova-forcedown-monitor`` configured as
an operator would (Keystone password auth, pulse = true, [monitor]
interval 0.5 s). Each run starts a cloud of its own (about a minute),
boots ``--servers`` servers onto compute1, switches it off through its
BMC with ipmitool, and reads Nova's API every 0.2 s for two moments: the
host forced down, and every one of its servers ACTIVE on another host.
(A cloud per run: a nova-compute 34 started again after ten evacuations
away from its host was seen here to clean up, then never report again.)

The baseline, in the same run: the same failure recovered without the
monitor, as a script that knows at once does it (the host switched off,
then forced down and each server evacuated at 2.94 through Nova's API),
from the force-down to every server ACTIVE: Nova's own rebuild time. The
monitor's figure to compare with it is from its force-down to all ACTIVE.

Prints p50 and p99 of each, the run's figures, and where the time goes.
"""

import argparse
import json
import statistics
import sys
import time

import fixtures

from tests.fixtures import processes
from tests.fixtures import real_nova
from tests.fixtures import redis_servers
from tools.benchmark import nova_host_failure

HOST = 'compute1'
TIMEOUT = nova_host_failure.TIMEOUT


def _arguments(argv):
    parser = argparse.ArgumentParser(prog='monitor_nova')
    parser.add_argument('--runs', type=int, default=10)
    parser.add_argument('--servers', type=int, default=10)
    parser.add_argument('--baseline-runs', type=int, default=3)
    return parser.parse_args(argv)


class Bench(nova_host_failure.HostFailure):

    def _setUp(self):
        self.pulses = self.useFixture(redis_servers.RedisNamespace())
        self.nova = self.useFixture(real_nova.RealNova(
            pulse_url=self.pulses.url))
        self.directory = self.useFixture(fixtures.TempDir()).path
        self.config = processes.write_config(
            self.directory, self.nova.monitor_config(
                self.directory, self.pulses.url,
                monitor_options='max_in_flight = 20'))

    def monitored_run(self, host, count):
        """(to forced down, to all ACTIVE elsewhere), from the power-off."""
        servers = self.nova.boot_servers(host, count=count, timeout=TIMEOUT)
        self.nova.wait_for_states({host: 'up'}, timeout=TIMEOUT)
        self.power_off(host)
        started = time.monotonic()
        forced_down = self.wait(lambda: self.nova.services()[host][
            'forced_down'], 'the host forced down')
        forced_down_at = time.monotonic() - started
        self.wait(lambda: self.active_elsewhere(servers, host),
                  'its servers active elsewhere')
        all_active = time.monotonic() - started
        return forced_down and forced_down_at, all_active

    def baseline_run(self, host, count):
        """Seconds from a script's force-down to all ACTIVE elsewhere."""
        servers = self.nova.boot_servers(host, count=count, timeout=TIMEOUT)
        self.power_off(host)
        service = self.nova.services()[host]
        started = time.monotonic()
        self.nova.compute.put('/os-services/%s' % service['id'],
                              microversion='2.53',
                              json={'forced_down': True})
        for server in servers:
            self.nova.compute.post('/servers/%s/action' % server,
                                   microversion='2.94',
                                   json={'evacuate': {}})
        self.wait(lambda: self.active_elsewhere(servers, host),
                  'its servers active elsewhere (baseline)')
        return time.monotonic() - started


def _monitored(bench, servers):
    monitor = processes.Process([
        processes.script('nova-forcedown-monitor'), '--config-file',
        bench.config])
    monitor.setUp()
    try:
        processes.wait_until(lambda: 'Leading' in monitor.output(),
                             timeout=60)
        return bench.monitored_run(HOST, servers)
    finally:
        monitor.cleanUp()


def main(argv=None):
    args = _arguments(sys.argv[1:] if argv is None else argv)
    baseline = []
    for number in range(args.baseline_runs):
        baseline.append(nova_host_failure.in_a_cloud(
            Bench, lambda bench: bench.baseline_run(HOST, args.servers)))
        print('baseline %d: %.2f s' % (number + 1, baseline[-1]),
              file=sys.stderr, flush=True)
    runs = []
    for number in range(args.runs):
        runs.append(nova_host_failure.in_a_cloud(
            Bench, lambda bench: _monitored(bench, args.servers)))
        print('run %d: forced down after %.2f s, all active after %.2f s'
              % ((number + 1,) + runs[-1]), file=sys.stderr, flush=True)
    summary = nova_host_failure.summary
    forced_down = [run[0] for run in runs]
    all_active = [run[1] for run in runs]
    rebuild = [run[1] - run[0] for run in runs]
    print(json.dumps({
        'servers': args.servers, 'runs': args.runs,
        'pulse': {'interval_s': real_nova.PULSE_INTERVAL,
                  'ttl_s': real_nova.PULSE_TTL},
        'nova_service_down_time_s': real_nova.SERVICE_DOWN_TIME,
        'power_off_to_forced_down_s': summary(forced_down),
        'power_off_to_all_active_s': summary(all_active),
        'monitor_forced_down_to_all_active_s': summary(rebuild),
        'baseline_forced_down_to_all_active_s': summary(baseline),
        'monitor_rebuild_minus_baseline_p50_s': round(
            statistics.median(rebuild) - statistics.median(baseline), 2),
        'each_run': [{'forced_down_s': round(run[0], 2),
                      'all_active_s': round(run[1], 2)} for run in runs],
    }, indent=2))
    return 0


if __name__ == '__main__':
    sys.exit(main())
