"""Servers created through the API, to ACTIVE on the hosts of one agent.

A run of its own (``--build-hosts N``, off by default), after the host
counts. For each mode, a fresh database and an API configured for it:
tasks looked for every ``task_poll_interval`` (no transport URL), and,
with ``--rpc-transport-url``, told over RPC (the API's configuration
carries the URL, which the agent reads too). One real agent (fake driver)
registers N hosts without servers (on PostgreSQL, its statistics are then
refreshed); before the creates, every 10th of them is disabled and every
25th forced down through the API, so that they must get none. Then:

* one at a time: ``--build-sequential`` servers, each created
  (``POST /servers``, m1.medium), followed until a GET shows it ACTIVE,
  deleted and followed until a GET answers 404, the client polling
  every 50 ms;
* 8 clients: each creates ``--build-concurrent`` servers as fast as the
  API accepts them; then every server is deleted the same way.

Figures: the request-to-result times the client saw, and from the
instance action records the time from the API's record of each create or
delete to the end of its agent's event (without the client's polling);
for 8 clients, the accepted requests per second, the time until all were
accepted and until all were ACTIVE (or gone), and the CPU seconds the API,
the agent and the database server (PostgreSQL) spent until all were
ACTIVE. Checks, which must be 0, read while the 8 clients' servers live:
servers of either run placed on a host that is not up and enabled (as
the services listing shows them), nodes whose servers take more than
their room, and servers not ACTIVE once their builds ended.
"""

import http.client
import json
import sys
import time

import psutil
import sqlalchemy as sa

from nova_forcedown.db import models
from nova_forcedown.db import schema
from nova_forcedown.objects import compute_node
from tools.benchmark import agents
from tools.benchmark import clients
from tools.benchmark import cpu
from tools.benchmark import latencies
from tools.benchmark import seeding
from tools.benchmark import server

HOST_PREFIX = 'build-'
# Of the agent's hosts, these take no server: disabled, forced down.
DISABLED_EVERY = 10
FORCED_DOWN_EVERY = 25
VERSION = '2.74'
# Nova's classic m1.medium, which the API is asked to create: 45 fit the
# disk of a fake node.
FLAVOR = {'id': '3', 'name': 'm1.medium', 'ram': 4096, 'vcpus': 2,
          'disk': 40}
# Any UUID is an image here: there is no image service.
IMAGE = '6a3e9d52-7c1f-4b8e-9f2d-0e5b4c3a2d10'
# Seconds between two polls of a server by a client, or of the database
# by the benchmark; how long a server may take before it counts as lost.
POLL_SECONDS = 0.05
TIMEOUT_SECONDS = 300
BUILD_EVENT = 'compute__do_build_and_run_instance'
DELETE_EVENT = 'compute_terminate_instance'


def measure(args):
    """{mode: figures} of the polling mode, and of RPC with a transport."""
    modes = [('polling', None)]
    if args.rpc_transport_url:
        modes.append(('rpc', {'DEFAULT': {
            'transport_url': args.rpc_transport_url}}))
    figures = {}
    for mode, options in modes:
        print('server builds, %s mode...' % mode, file=sys.stderr,
              flush=True)
        figures[mode] = _mode(args, mode, options)
    return figures


def _mode(args, mode, options):
    """The figures of one mode, on a database of its own."""
    database = seeding.Database(args.db_url)
    engine = sa.create_engine(database.url, poolclass=sa.pool.NullPool)
    try:
        schema.db_sync(engine)
        api = server.Server(database, args.workers, args.threads,
                            name='builds-' + mode, options=options)
        with api.serving():
            return _with_an_agent(api, engine, args)
    finally:
        engine.dispose()
        database.drop()


def _with_an_agent(api, engine, args):
    hosts = args.build_hosts
    agent = agents.Agent(api, HOST_PREFIX, hosts, 0)
    agent.start(engine, hosts_needed=hosts)
    try:
        if engine.dialect.name == 'postgresql':
            # Statistics of the hosts, as autovacuum keeps them in a
            # running cloud and seeding.seed leaves them for other runs.
            with engine.begin() as connection:
                connection.exec_driver_sql('ANALYZE')
        _answered(api.port, 'POST', '/flavors', '2.1', {'flavor': FLAVOR})
        unhealthy = _disable_and_force_down(api.port, hosts)
        # The agent's first casts may come before it listens (RPC): a
        # look for lost ones takes them up; unmeasured here.
        _one_at_a_time(api.port, engine, clients.CLIENTS, 'warm-up')
        figures = {'agent_hosts': hosts, 'unhealthy_hosts': len(unhealthy),
                   'backend': engine.dialect.name}
        made = []
        figures['one at a time'] = _one_at_a_time(
            api.port, engine, args.build_sequential, 'one', made)
        figures['8 clients'], figures['checks'] = _eight_clients(
            api, agent, engine, args.build_concurrent, made)
        return figures
    finally:
        agent.stop()


# ------------------------------------------------------------- the requests

def _answered(port, method, path, version, body=None):
    """The answer's body; RuntimeError unless it is a success."""
    client = clients.Client(port)
    try:
        status, _, payload = client.request(method, path, version, body)
    finally:
        client.close()
    if status >= 300:
        raise RuntimeError('%s %s: %s %s' % (method, path, status,
                                             payload[:300]))
    return payload


def _disable_and_force_down(port, hosts):
    """The names of the agent's hosts that were made to take no server."""
    made = set()
    for index in range(1, hosts + 1):
        host = '%s%d' % (HOST_PREFIX, index)
        for every, action, more in (
                (DISABLED_EVERY, 'disable', {}),
                (FORCED_DOWN_EVERY, 'force-down', {'forced_down': True})):
            if index % every == 0:
                _answered(port, 'PUT', '/os-services/' + action, '2.11',
                          dict(more, host=host, binary='nova-compute'))
                made.add(host)
    return made


def _create(client, name, statements=None):
    """POST one server; (seconds, its uuid) or (None, why it failed)."""
    body = {'server': {'name': name, 'flavorRef': FLAVOR['id'],
                       'imageRef': IMAGE, 'networks': 'auto'}}
    start = time.perf_counter()
    try:
        status, count, payload = client.request('POST', '/servers', VERSION,
                                                body)
    except (OSError, http.client.HTTPException) as exc:
        return None, repr(exc)
    elapsed = time.perf_counter() - start
    if status != 202:
        return None, '%s %s' % (status, payload[:200])
    if statements is not None:
        statements.add(count)
    return elapsed, json.loads(payload)['server']['id']


def _delete(client, uuid):
    """DELETE one server; (seconds, None) or (None, why it failed)."""
    start = time.perf_counter()
    try:
        status, _, payload = client.request('DELETE', '/servers/' + uuid,
                                            VERSION)
    except (OSError, http.client.HTTPException) as exc:
        return None, repr(exc)
    if status != 204:
        return None, '%s %s' % (status, payload[:200])
    return time.perf_counter() - start, None


def _seen(client, uuid, wanted, start):
    """Seconds from ``start`` until a GET shows ``wanted``; or None.

    ``wanted``: a status (ACTIVE), or 404 for a server gone. None too
    once it shows ERROR.
    """
    deadline = time.monotonic() + TIMEOUT_SECONDS
    while time.monotonic() < deadline:
        status, _, payload = client.request('GET', '/servers/' + uuid,
                                            VERSION)
        shown = (json.loads(payload)['server']['status'] if status == 200
                 else status)
        if shown == wanted:
            return time.perf_counter() - start
        if shown == 'ERROR':
            return None
        time.sleep(POLL_SECONDS)
    return None


# --------------------------------------------------------------- the runs

def _one_at_a_time(port, engine, count, label, made=None):
    """Create, see ACTIVE, delete, see gone: ``count`` times in a row."""
    client = clients.Client(port)
    accepted, to_active, to_gone, failures, uuids = [], [], [], [], []
    try:
        for index in range(count):
            start = time.perf_counter()
            seconds, uuid = _create(client, 'build-%s-%d' % (label, index))
            if seconds is None:
                failures.append(uuid)
                continue
            accepted.append(seconds)
            uuids.append(uuid)
            seen = _seen(client, uuid, 'ACTIVE', start)
            if seen is None:
                failures.append('%s not ACTIVE' % uuid)
                continue
            to_active.append(seen)
            start = time.perf_counter()
            done, why = _delete(client, uuid)
            if done is None:
                failures.append(why)
                continue
            seen = _seen(client, uuid, 404, start)
            if seen is None:
                failures.append('%s not gone' % uuid)
                continue
            to_gone.append(seen)
    finally:
        client.close()
    if made is not None:
        made.extend(uuids)
    return {
        'create, accepted': latencies.summary(accepted, [], set(), None),
        'create, request to ACTIVE seen': latencies.summary(
            to_active, failures, set(), None),
        'create, recorded to done': latencies.summary(
            recorded_to_done(engine, uuids, 'create', BUILD_EVENT), [],
            set(), None),
        'delete, request to gone seen': latencies.summary(
            to_gone, [], set(), None),
        'delete, recorded to done': latencies.summary(
            recorded_to_done(engine, uuids, 'delete', DELETE_EVENT), [],
            set(), None)}


def _eight_clients(api, agent, engine, each, made):
    """8 clients create ``each`` servers, then delete them all.

    The checks are read in between, while the servers live.
    """
    statements = set()

    def creates(index):
        client = clients.Client(api.port)
        times, failures, uuids = [], [], []
        try:
            for number in range(each):
                seconds, found = _create(
                    client, 'build-8c-%d-%d' % (index, number), statements)
                if seconds is None:
                    failures.append(found)
                else:
                    times.append(seconds)
                    uuids.append(found)
        finally:
            client.close()
        made.extend(uuids)
        return times, failures, set()

    usage = _CpuUsage(api, agent, engine)
    before = len(made)
    started = time.perf_counter()
    times, failures, _, accepted = clients.concurrently(creates)
    uuids = made[before:]
    built = _wait(lambda: _building(engine, uuids) == 0)
    create = latencies.summary(times, failures, statements, accepted)
    create.update(usage.stop())
    create.update(
        servers=len(uuids), accepted_s=round(accepted, 2),
        all_active_s=round(built - started, 2) if built else None,
        active_per_second=(round(len(uuids) / (built - started), 1)
                           if built else None),
        not_active=len(uuids) - _active(engine, uuids),
        most_on_one_node=_most_on_one_node(engine, uuids))
    checks = _checks(api.port, engine, made)

    def deletes(index):
        client = clients.Client(api.port)
        times, failures = [], []
        try:
            for uuid in uuids[index::clients.CLIENTS]:
                seconds, why = _delete(client, uuid)
                if seconds is None:
                    failures.append(why)
                else:
                    times.append(seconds)
        finally:
            client.close()
        return times, failures, set()

    started = time.perf_counter()
    times, failures, _, accepted = clients.concurrently(deletes)
    gone = _wait(lambda: _live(engine, uuids) == 0)
    delete = latencies.summary(times, failures, set(), accepted)
    delete.update(accepted_s=round(accepted, 2),
                  all_gone_s=round(gone - started, 2) if gone else None)
    return {
        'create': create,
        'create, recorded to done': latencies.summary(
            recorded_to_done(engine, uuids, 'create', BUILD_EVENT), [],
            set(), None),
        'delete': delete,
        'delete, recorded to done': latencies.summary(
            recorded_to_done(engine, uuids, 'delete', DELETE_EVENT), [],
            set(), None)}, checks


class _CpuUsage:
    """CPU seconds of the API, the agent and the database server."""

    def __init__(self, api, agent, engine):
        self._processes = {'api_cpu_s': api.processes(),
                           'agent_cpu_s': [psutil.Process(
                               agent.process.pid)]}
        self._before = {name: self._seconds(found)
                        for name, found in self._processes.items()}
        matcher = cpu.database_server(engine.url)
        self._database = (cpu.Sampler(matcher) if matcher is not None
                          else None)
        if self._database is not None:
            self._database.start()

    @staticmethod
    def _seconds(processes):
        total = 0.0
        for process in processes:
            try:
                total += cpu.seconds(process)
            except psutil.NoSuchProcess:
                pass
        return total

    def stop(self):
        found = {name: round(self._seconds(processes) - self._before[name],
                             2)
                 for name, processes in self._processes.items()}
        found['database_cpu_s'] = (self._database.stop()
                                   if self._database is not None else None)
        return found


def _wait(done):
    """perf_counter() once ``done()``, or None after TIMEOUT_SECONDS."""
    deadline = time.monotonic() + TIMEOUT_SECONDS
    while time.monotonic() < deadline:
        if done():
            return time.perf_counter()
        time.sleep(POLL_SECONDS)
    return None


# ------------------------------------------------- what the database says

def _count(engine, query, uuids, **lists):
    """The count ``query`` reads; ``:uuids`` and ``lists`` are IN lists."""
    lists = dict(lists, uuids=list(uuids))
    with engine.connect() as connection:
        return connection.execute(sa.text(query).bindparams(
            *[sa.bindparam(name, expanding=True) for name in lists]),
            lists).scalar()


def _building(engine, uuids):
    """How many of ``uuids`` are live and still have their build task."""
    return _count(engine, "SELECT count(*) FROM instances WHERE uuid IN "
                          ":uuids AND deleted = 0 AND task_state = "
                          "'spawning'", uuids)


def _active(engine, uuids):
    return _count(engine, "SELECT count(*) FROM instances WHERE uuid IN "
                          ":uuids AND deleted = 0 AND vm_state = 'active' "
                          "AND task_state IS NULL", uuids)


def _live(engine, uuids):
    return _count(engine, "SELECT count(*) FROM instances WHERE uuid IN "
                          ":uuids AND deleted = 0", uuids)


def _most_on_one_node(engine, uuids):
    """The most of ``uuids`` placed on one node (live or deleted)."""
    with engine.connect() as connection:
        return connection.execute(sa.text(
            "SELECT count(*) AS n FROM instances WHERE uuid IN :uuids "
            "GROUP BY node ORDER BY n DESC").bindparams(
                sa.bindparam('uuids', expanding=True)),
            {'uuids': list(uuids)}).scalar() or 0


def recorded_to_done(engine, uuids, action, event):
    """Seconds from each ``action``'s record to the end of its ``event``."""
    actions = models.InstanceAction.__table__
    events = models.InstanceActionEvent.__table__
    query = (sa.select(actions.c.start_time, events.c.finish_time)
             .join(events, events.c.action_id == actions.c.id)
             .where(actions.c.action == action, events.c.event == event,
                    events.c.finish_time.is_not(None),
                    actions.c.instance_uuid.in_(list(uuids))))
    with engine.connect() as connection:
        return [(finish - start).total_seconds()
                for start, finish in connection.execute(query)]


def _checks(port, engine, uuids):
    """The figures that must be 0, over every server the runs made.

    A host is up and enabled as the services listing says at the end.
    """
    listed = json.loads(_answered(port, 'GET',
                                  '/os-services?binary=nova-compute',
                                  '2.11'))['services']
    unhealthy = [service['host'] for service in listed
                 if service['host'].startswith(HOST_PREFIX) and
                 (service['state'] != 'up' or
                  service['status'] != 'enabled')]
    on_unhealthy = _count(
        engine, 'SELECT count(*) FROM instances WHERE uuid IN :uuids AND '
                'host IN :hosts', uuids, hosts=unhealthy) if unhealthy else 0
    return {'hosts not up and enabled': len(unhealthy),
            'servers placed on them': on_unhealthy,
            'overcommitted nodes': _overcommitted(engine)}


def _overcommitted(engine):
    """Nodes of the agent whose live servers take more than their room.

    Memory, disk and vcpus, with Nova's initial allocation ratios.
    """
    with engine.connect() as connection:
        return connection.execute(sa.text(
            "SELECT count(*) FROM compute_nodes n JOIN (SELECT host, "
            "sum(vcpus) AS vcpus, sum(memory_mb) AS memory_mb, "
            "sum(root_gb + ephemeral_gb) AS disk_gb FROM instances WHERE "
            "deleted = 0 GROUP BY host) i ON i.host = n.host WHERE n.host "
            "LIKE :prefix AND n.deleted = 0 AND (i.memory_mb > "
            "n.memory_mb * :ram OR i.disk_gb > n.local_gb * :disk OR "
            "i.vcpus > n.vcpus * :cpu)"),
            {'prefix': HOST_PREFIX + '%', 'ram': compute_node.RAM_RATIO,
             'disk': compute_node.DISK_RATIO,
             'cpu': compute_node.CPU_RATIO}).scalar()
