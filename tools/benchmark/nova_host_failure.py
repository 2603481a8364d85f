"""A host of a real Nova switched off, and its servers' recovery read.

What the benchmarks of recovery on a real OpenStack Nova 34 cloud
(tests/fixtures/real_nova.py) share, whatever recovers the host
(monitor_nova: nova-forcedown-monitor; ha_tools_nova: the replays of
Masakari and Pacemaker's instance HA): the power-off through the host's
BMC, the reads of Nova's API every :data:`POLL` seconds until a moment is
reached, and the figures. Each run takes a cloud of its own (about a
minute): a nova-compute 34 started again after ten evacuations away from
its host was seen here to clean up, then never report again.
"""

import statistics

import fixtures

from tests.fixtures import processes
from tools.benchmark import latencies

POLL = 0.2
TIMEOUT = 180


class HostFailure(fixtures.Fixture):
    """Reads of a host's failure and recovery on ``self.nova``.

    A subclass's set-up starts ``self.nova``, a
    :class:`~tests.fixtures.real_nova.RealNova`.
    """

    def power_off(self, host):
        """Switch ``host`` off through its BMC, as an operator does."""
        result = self.nova.ipmitool(host, 'chassis', 'power', 'off')
        if result.returncode:
            raise SystemExit('ipmitool: %s' % result.stderr)

    def active_elsewhere(self, servers, host):
        """Whether every one of ``servers`` is ACTIVE on another host."""
        found = self.nova.servers()
        return all(
            server in found and found[server]['status'] == 'ACTIVE' and
            not found[server].get('OS-EXT-STS:task_state') and
            self.nova.server_host(found[server]) not in (host, None)
            for server in servers)

    def wait(self, predicate, what):
        """Read ``predicate`` every POLL s until true; stop after TIMEOUT."""
        if not processes.wait_until(predicate, timeout=TIMEOUT,
                                    interval=POLL):
            raise SystemExit('%s: not reached within %d s; servers: %s; '
                             'evacuations: %s' % (what, TIMEOUT,
                                                  self.servers_said(),
                                                  self.evacuations_said()))
        return True

    def servers_said(self):
        return {server: (found['status'], self.nova.server_host(found),
                         found.get('OS-EXT-STS:task_state'),
                         (found.get('fault') or {}).get('message'))
                for server, found in self.nova.servers().items()}

    def evacuations_said(self):
        migrations = self.nova.compute.get(
            '/os-migrations?migration_type=evacuation',
            microversion='2.53').json()['migrations']
        return [(migration['instance_uuid'][:8], migration['status'],
                 migration['dest_compute']) for migration in migrations]


def summary(values):
    """p50, p99 and max of ``values``, in seconds to the hundredth."""
    return {'p50': round(statistics.median(values), 2),
            'p99': round(latencies.percentile(values, 0.99), 2),
            'max': round(max(values), 2)}


def in_a_cloud(bench_class, measure):
    """``measure(bench)`` in a cloud of its own: a ``bench_class()``."""
    bench = bench_class()
    bench.setUp()
    try:
        return measure(bench)
    finally:
        bench.cleanUp()
