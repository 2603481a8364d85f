"""``python -m tools.fault_injection``: options, the run, the report."""

import argparse
import os
import shutil
import sys
import threading
import time

import sqlalchemy as sa

from nova_forcedown.db import models
from nova_forcedown.db import schema
from tools.fault_injection import client as api_client
from tools.fault_injection import deployment as deployment_mod
from tools.fault_injection import faults as faults_mod
from tools.fault_injection import hosts as hosts_mod
from tools.fault_injection import invariants
from tools.fault_injection import report
from tools.fault_injection import storm as storm_mod

FLAVOR = {'name': 'fi.big', 'id': 'fi.big', 'ram': 64 * 1024, 'vcpus': 8,
          'disk': 400}
# What the clients create: the big flavor, or a quarter of it.
SMALL_FLAVOR = {'name': 'fi.small', 'id': 'fi.small', 'ram': 16 * 1024,
                'vcpus': 2, 'disk': 100}
# Long enough that a host whose agent merely crashed is never down by
# its heartbeat during a run: only fenced hosts are evacuable.
SERVICE_DOWN_TIME = 600
# Seconds the final recovery waits for the last rebuilds, then is quiet.
SETTLE_LIMIT = 90
QUIET = 3


def parse(argv):
    parser = argparse.ArgumentParser(
        prog='python -m tools.fault_injection',
        description='Evacuation storms, creates and deletes against real '
                    'agents while they crash, hosts are fenced and '
                    'repaired, and the database, Redis and the broker go '
                    'away; exits 1 on any violated invariant.')
    parser.add_argument('--duration', type=float, default=120,
                        help='seconds of storm and faults (default 120)')
    parser.add_argument('--seed', default='0',
                        help='seed of every random choice (default 0)')
    parser.add_argument('--hosts', type=int, default=8,
                        help='agents, one simulated host each (default 8)')
    parser.add_argument('--instances', type=int, default=3,
                        help='servers per host, of the big flavor (default '
                             '3: a host has room for 4)')
    parser.add_argument('--clients', type=int, default=16,
                        help='client threads (default 16)')
    parser.add_argument('--db-url', help='a database server to create a '
                        'fresh database on (default: a temporary SQLite '
                        'file, which no fault can cut), e.g. '
                        'postgresql+psycopg2://openstack_citest:'
                        'openstack_citest@127.0.0.1/openstack_citest')
    parser.add_argument('--coordination', choices=('redis',),
                        help='the tooz servicegroup driver on Redis '
                             '127.0.0.1:6379 (through a relay that is cut '
                             'too); default: the db driver')
    parser.add_argument('--messaging', choices=('rabbit',),
                        help='cast the tasks to the agents over RabbitMQ '
                             '127.0.0.1:5672, in a virtual host of the '
                             "run's own, through a relay that is cut too; "
                             'default: the agents look in the database')
    parser.add_argument('--max-fenced', type=int,
                        help='hosts fenced at once (default: a quarter)')
    parser.add_argument('--client-timeout', type=float, default=30,
                        help='seconds an answer may take (default 30)')
    parser.add_argument('--sample-interval', type=float, default=0.5,
                        help='seconds between invariant samples')
    parser.add_argument('--json', action='store_true',
                        help='print the figures as JSON (the text report '
                             'goes to stderr)')
    parser.add_argument('--keep', action='store_true',
                        help='keep the run directory (logs, state files)')
    args = parser.parse_args(argv)
    if args.hosts < 3:
        parser.error('--hosts must be at least 3')
    if args.max_fenced is None:
        args.max_fenced = max(1, args.hosts // 4)
    return args


def main(argv=None):
    args = parse(argv)
    deployment = deployment_mod.Deployment(args.db_url, args.coordination,
                                           SERVICE_DOWN_TIME, args.messaging)
    processes = []
    try:
        figures = _run(args, deployment, processes)
    finally:
        for process in processes:
            process.terminate()
        for process in processes:
            process.stop()
        if args.keep:
            kept = deployment.directory + '-kept'
            shutil.copytree(deployment.directory, kept)
            print('run directory kept in %s' % kept, file=sys.stderr)
        deployment.close()
    print(report.text(figures), file=sys.stderr if args.json else sys.stdout)
    if args.json:
        print(report.dump(figures))
    return 1 if figures['violation_count'] else 0


def _run(args, deployment, processes):
    started = time.monotonic()
    violations = report.Violations()
    cuts = api_client.Cuts(harmless={deployment_mod.BROKER})
    schema.db_sync(deployment.engine)
    api_process = deployment_mod.Api(deployment)
    processes.append(api_process)
    api = api_client.Api(api_process.port, args.client_timeout, cuts,
                         violations)
    _start_api(api_process, api)
    for flavor in (FLAVOR, SMALL_FLAVOR):
        _create_flavor(api, flavor)
    agents = [deployment_mod.Agent(deployment, index, args.instances,
                                   FLAVOR['name'])
              for index in range(1, args.hosts + 1)]
    processes.extend(agents)
    _start_agents(agents)
    hosts = hosts_mod.Hosts(agents, deployment.engine)
    _read_services(hosts)
    ledger = invariants.Ledger()
    checker = invariants.Checker(deployment.engine, deployment.state_dir,
                                 hosts, violations, args.sample_interval,
                                 ledger)
    if checker.baseline() != args.hosts * args.instances:
        raise RuntimeError('%d servers registered, %d expected' % (
            checker.servers, args.hosts * args.instances))
    checker.check('start')
    ready = time.monotonic()
    faults = faults_mod.Faults(api, hosts, deployment.relays, cuts, checker,
                               violations, args.seed, args.max_fenced)
    clients = storm_mod.Storm(api, hosts, faults, violations, args.seed,
                              args.clients, ledger,
                              (FLAVOR['id'], SMALL_FLAVOR['id']))
    checker.start()
    clients.start()
    faults.start()
    time.sleep(args.duration)
    clients.stop()
    stormed = time.monotonic()
    faults.stop()
    _recover(agents, hosts, faults)
    settled = _settle(deployment.engine)
    recovered = time.monotonic()
    final = checker.final()
    checker.stop()
    if not api_process.alive:
        violations.add('api-died', api_process.output()[-2000:])
    if not settled:
        violations.add('not-settled', 'builds, rebuilds or deletes still '
                       'under way after %d s' % SETTLE_LIMIT)
    return {
        'backend': deployment.backend, 'hosts': args.hosts,
        'instances': args.instances, 'clients': args.clients,
        'duration': args.duration, 'seed': args.seed,
        'servicegroup': 'tooz (redis)' if args.coordination else 'db',
        'tasks': 'cast (rabbit)' if args.messaging else 'database look',
        'seconds': {'start': round(ready - started, 1),
                    'storm': round(stormed - ready, 1),
                    'recovery': round(recovered - stormed, 1)},
        'requests': report.requests_by_status(api.statuses),
        'evacuations_accepted': dict(clients.accepted),
        'creates_accepted': dict(clients.created),
        'creates_judged': clients.creates_judged,
        'deletes_answered': dict(clients.deleted),
        'refusals': {'%s %d %s' % key: count for key, count in
                     api.refusals.most_common()},
        'forced_up_while_fenced': clients.forced_up_while_fenced,
        'faults': dict(faults.counts),
        'checks': checker.checks,
        'final': final,
        'violation_count': violations.total,
        'violations': violations.as_dict(),
        'machine': {'cpus': os.cpu_count()},
    }


def _start_api(process, api):
    process.start()
    deadline = time.monotonic() + 90
    while time.monotonic() < deadline:
        if not process.alive:
            raise RuntimeError('the API exited:\n' + process.output())
        if api_client.answers(api.port):
            return
        time.sleep(0.2)
    raise RuntimeError('the API did not answer:\n' + process.output())


def _create_flavor(api, flavor):
    answer = api.request('setup', 'POST', '/flavors', '2.1',
                         {'flavor': flavor})
    if answer.status != 200:
        raise RuntimeError('flavor not created: %s %s' % (answer.status,
                                                          answer.body))


def _start_agents(agents):
    """Start them all at once; wait for each (again if it failed)."""
    failures = []

    def ready(agent):
        try:
            agent.start_ready(timeout=180)
        except RuntimeError as exc:
            failures.append(str(exc))

    threads = [threading.Thread(target=ready, args=(agent,))
               for agent in agents]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    if failures:
        raise RuntimeError(failures[0])


def _read_services(hosts):
    services = models.Service.__table__
    with hosts.engine.connect() as connection:
        for row in connection.execute(sa.select(
                services.c.host, services.c.uuid).where(
                    services.c.deleted == 0,
                    services.c.binary == 'nova-compute')):
            hosts.by_name[row.host].service_uuid = row.uuid


def _recover(agents, hosts, faults):
    """Every agent running (the episodes left them so, unless broken)."""
    for agent in agents:
        if not agent.alive:
            faults.violations.add('agent-left-dead', agent.host)
            agent.start_ready()
    left = hosts.in_state(hosts_mod.CRASHED, hosts_mod.FENCING,
                          hosts_mod.FENCED, hosts_mod.REPAIRING)
    if left:
        faults.violations.add('host-left-unrepaired', ', '.join(left))


def _settle(engine):
    """Wait until no build, rebuild or delete is under way; settled?

    Then a quiet moment.
    """
    query = sa.text(
        "SELECT count(*) FROM instances WHERE deleted = 0 AND "
        "task_state IN ('spawning', 'rebuilding', 'deleting')")
    deadline = time.monotonic() + SETTLE_LIMIT
    while True:
        with engine.connect() as connection:
            rebuilding = connection.execute(query).scalar()
        if not rebuilding:
            time.sleep(QUIET)
            return True
        if time.monotonic() > deadline:
            return False
        time.sleep(0.5)
