"""Evacuation of forced-down hosts, as fence agents and Masakari do it.

Two real agents (fake driver) in an availability zone of their own: one
runs the hosts that will fail, with their servers, the other the
destinations, empty. The first is stopped and its hosts forced down; then
8 clients evacuate every server, one request per server at 2.53, as the
tools do. Figures: the time until every evacuation was accepted, the
time until every server was active on a destination (its agent rebuilt
it), the latency of the requests, and two checks: no destination holds
more memory than its node has, and no server was lost.
"""

import time

import psutil
import sqlalchemy as sa

from tools.benchmark import agents
from tools.benchmark import clients
from tools.benchmark import latencies

# Each run has a zone of its own: the destinations of an earlier run,
# their agent gone, are still up for service_down_time.
ZONE = 'evacuation-benchmark-%s'
TIMEOUT_SECONDS = 300


def measure(api, engine, label, failed_hosts, per_host, destinations):
    """Figures of evacuating ``failed_hosts`` hosts of ``per_host``."""
    zone = ZONE % label
    dest = agents.Agent(api, 'evac-%s-dest-' % label, destinations, 0,
                        '--availability-zone', zone)
    failed = agents.Agent(api, 'evac-%s-failed-' % label, failed_hosts,
                          per_host, '--availability-zone', zone)
    try:
        dest.start(engine, hosts_needed=destinations)
        uuids = failed.start(engine)
        failed.stop()
        _force_down(api.port, failed.prefix, failed_hosts)
        started = time.perf_counter()
        cpu_before = _cpu_seconds(api)
        shares = [uuids[index::clients.CLIENTS]
                  for index in range(clients.CLIENTS)]
        times, failures, _, accepted = clients.concurrently(
            lambda index: _evacuate(api.port, shares[index]))
        api_cpu = _cpu_seconds(api) - cpu_before
        done = _wait_until_rebuilt(engine, uuids, dest.prefix)
        figures = latencies.summary(times, failures, set(), accepted)
        figures.update(
            servers=len(uuids), accepted_s=round(accepted, 2),
            api_cpu_s=round(api_cpu, 2),
            active_on_destination_s=(round(done - started, 2)
                                     if done else None),
            lost=len(uuids) - _settled(engine, uuids, dest.prefix),
            overcommitted_hosts=_overcommitted(engine, dest.prefix))
        return figures
    finally:
        failed.stop()
        dest.stop()


def _cpu_seconds(api):
    """CPU seconds (user and system) the API's processes used so far."""
    total = 0.0
    for process in api.processes():
        try:
            times = process.cpu_times()
        except psutil.NoSuchProcess:
            continue
        total += times.user + times.system
    return total


def _force_down(port, prefix, hosts):
    client = clients.Client(port)
    try:
        for index in range(1, hosts + 1):
            status, _, body = client.request(
                'PUT', '/os-services/force-down', '2.11',
                {'host': '%s%d' % (prefix, index), 'binary': 'nova-compute',
                 'forced_down': True})
            if status != 200:
                raise RuntimeError('force-down failed: %s %s' % (status,
                                                                 body))
    finally:
        client.close()


def _evacuate(port, uuids):
    client = clients.Client(port)
    times, failures = [], []
    try:
        for uuid in uuids:
            clients.timed_request(client, ('POST', '/servers/%s/action'
                                           % uuid, '2.53', {'evacuate': {}}),
                                  times, failures)
    finally:
        client.close()
    return times, failures, set()


def _settled(engine, uuids, dest_prefix):
    """How many of ``uuids`` are active, with no task, on a destination."""
    with engine.connect() as connection:
        return connection.execute(sa.text(
            "SELECT count(*) FROM instances WHERE uuid IN :uuids AND "
            "host LIKE :prefix AND vm_state = 'active' AND task_state IS "
            "NULL AND deleted = 0").bindparams(
                sa.bindparam('uuids', expanding=True)),
            {'uuids': list(uuids), 'prefix': dest_prefix + '%'}).scalar()


def _wait_until_rebuilt(engine, uuids, dest_prefix):
    """perf_counter() when every server settled, or None on timeout."""
    deadline = time.monotonic() + TIMEOUT_SECONDS
    while time.monotonic() < deadline:
        if _settled(engine, uuids, dest_prefix) == len(uuids):
            return time.perf_counter()
        time.sleep(0.05)
    return None


def _overcommitted(engine, dest_prefix):
    """Destinations whose servers take more memory than the node has."""
    with engine.connect() as connection:
        return connection.execute(sa.text(
            "SELECT count(*) FROM compute_nodes n WHERE n.host LIKE :prefix "
            "AND n.deleted = 0 AND n.memory_mb < (SELECT "
            "coalesce(sum(i.memory_mb), 0) FROM instances i WHERE "
            "i.host = n.host AND i.deleted = 0)"),
            {'prefix': dest_prefix + '%'}).scalar()
