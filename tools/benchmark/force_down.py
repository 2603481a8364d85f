"""Force-down at 2.11 and 2.53: sequential, 8 clients, sustained.

Every host forced down is brought up again by the next request, so the
seeded cloud is the same after the run as before it.
"""

import itertools
import time

from tools.benchmark import clients
from tools.benchmark import latencies
from tools.benchmark import seeding


def request(uuids, version, index, down):
    """(method, path, body) forcing host ``index`` down or up."""
    host = seeding.host_name(index)
    if version == '2.11':
        return ('PUT', '/os-services/force-down',
                {'host': host, 'binary': 'nova-compute', 'forced_down': down})
    return ('PUT', '/os-services/%s' % uuids[host], {'forced_down': down})


def force_down_loop(port, uuids, version, indexes, deadline=None):
    """Force each host down then up again; (latencies, failures, counts)."""
    client = clients.Client(port)
    times, failures, statements = [], [], set()
    try:
        for index in indexes:
            if deadline is not None and time.monotonic() > deadline:
                break
            for down in (True, False):
                method, path, body = request(uuids, version, index, down)
                statements.add(clients.timed_request(
                    client, (method, path, version, body), times,
                    failures))
    finally:
        client.close()
    return times, failures, statements


def measure(port, uuids, hosts, sequential, concurrent_each,
            sustain_seconds):
    """Latencies, rates, failures and SQL statements of force-downs."""
    results = {}
    for version in ('2.11', '2.53'):
        indexes = [1 + (i * 7) % hosts for i in range(sequential)]
        results['force-down %s sequential' % version] = latencies.summary(
            *force_down_loop(port, uuids, version, indexes), elapsed=None)

        def each_on_its_hosts(client):
            return force_down_loop(
                port, uuids, version,
                [1 + (client + clients.CLIENTS * i) % hosts
                 for i in range(concurrent_each)])
        results['force-down %s 8 clients' % version] = latencies.summary(
            *clients.concurrently(each_on_its_hosts))

    deadline = time.monotonic() + sustain_seconds

    def until_deadline(client):
        return force_down_loop(
            port, uuids, '2.53',
            (1 + (client + clients.CLIENTS * i) % hosts
             for i in itertools.count()),
            deadline)
    results['force-down 2.53 sustained 8 clients'] = latencies.summary(
        *clients.concurrently(until_deadline))
    return results
