"""``python -m tools.benchmark``: options, one run per host count, output."""

import argparse
import datetime
import json
import logging
import sys
import time

import sqlalchemy as sa

from nova_forcedown.db import schema
from nova_forcedown import objects
import tools.benchmark
from tools.benchmark import actions
from tools.benchmark import evacuations
from tools.benchmark import force_down
from tools.benchmark import heartbeats
from tools.benchmark import host_wide
from tools.benchmark import http_path
from tools.benchmark import listings
from tools.benchmark import report
from tools.benchmark import rpc_run
from tools.benchmark import seeding
from tools.benchmark import server
from tools.benchmark import server_builds
from tools.benchmark import slow_clients
from tools.benchmark import tooz_liveness


def run_one(args, hosts):
    """Figures of one host count, on a database of its own."""
    started = time.monotonic()
    database = seeding.Database(args.db_url)
    engine = sa.create_engine(database.url, poolclass=sa.pool.NullPool)
    try:
        schema.db_sync(engine)
        uuids = seeding.seed(engine, hosts)
        run = {'hosts': hosts}
        run.update(_through_the_api(args, database, engine, uuids, hosts))
        run.update(_heartbeats(args, database))
        run['seconds'] = round(time.monotonic() - started, 1)
        return run
    finally:
        engine.dispose()
        database.drop()


def _through_the_api(args, database, engine, uuids, hosts):
    """What is measured over HTTP, while the API's memory is sampled."""
    api = server.Server(database, args.workers, args.threads)
    with api.serving():
        sampler = server.RssSampler(api)
        sampler.start()
        try:
            figures = {
                'listings': listings.measure(
                    api.port, engine, seeding.busy_host(hosts),
                    args.iterations, args.budget),
                'force_down': force_down.measure(
                    api.port, uuids, hosts, args.sequential,
                    args.concurrent, args.sustain),
                'http_path': None,
                'slow_clients': None,
                'actions': None,
                'evacuations': None,
                'host_wide': None,
            }
            if args.http_path:
                figures['http_path'] = http_path.measure(
                    api, engine, uuids, hosts, args.http_path)
            if args.action_hosts and hosts == args.hosts[0]:
                figures['actions'] = actions.measure(
                    api, engine, args.action_hosts, args.action_sequential,
                    args.action_concurrent)
            if args.evacuate_instances and hosts == args.hosts[0]:
                figures['evacuations'] = {
                    '%d host(s) of %d servers' % (failed,
                                                  args.evacuate_instances):
                    evacuations.measure(
                        api, engine, 'h%d' % failed, failed,
                        args.evacuate_instances, args.evacuate_destinations)
                    for failed in sorted({1, args.evacuate_hosts})}
            if (args.host_wide_servers and hosts == args.hosts[0] and
                    hosts >= host_wide.HOST_INDEX):
                figures['host_wide'] = host_wide.measure(
                    api.port, engine, args.host_wide_servers,
                    args.host_wide_rounds)
            if args.slow_clients and hosts == args.hosts[0]:
                figures['slow_clients'] = slow_clients.measure(
                    api.port, uuids, hosts, args.slow_clients,
                    args.slow_seconds)
        finally:
            sampler.stop()
        figures['rss'] = sampler.figures()
    unpaged, figures['rss_unpaged'] = _unpaged_listings(
        args, database, engine, hosts)
    figures['listings'].update(unpaged)
    return figures


def _unpaged_listings(args, database, engine, hosts):
    """(figures, memory) of listings of one page of every server.

    They need a server whose [api] max_limit is raised.
    """
    api = server.Server(database, args.workers, args.threads,
                        max_limit=listings.UNPAGED_MAX_LIMIT, name='unpaged')
    with api.serving():
        sampler = server.RssSampler(api)
        sampler.start()
        try:
            figures = listings.measure(
                api.port, engine, seeding.busy_host(hosts), args.iterations,
                args.budget, listings=listings.UNPAGED_LISTINGS)
        finally:
            sampler.stop()
        return figures, sampler.figures()


def _heartbeats(args, database):
    """Heartbeats one host per call, then many hosts per call."""
    senders = (database.url_text, args.heartbeat_processes,
               args.heartbeat_threads, args.heartbeat_seconds)
    return {
        'heartbeats': heartbeats.measure(*senders),
        'heartbeats_batched': heartbeats.measure(
            *senders, batch=args.heartbeat_batch),
    }


def run_tooz(args):
    """Liveness of --tooz-hosts hosts on the tooz driver.

    On a database of its own, where the db driver's heartbeats are then
    measured too, for comparison.
    """
    started = time.monotonic()
    database = seeding.Database(args.db_url)
    engine = sa.create_engine(database.url, poolclass=sa.pool.NullPool)
    try:
        schema.db_sync(engine)
        uuids = seeding.seed(engine, args.tooz_hosts)
        options = argparse.Namespace(
            seconds=args.tooz_seconds, agents=args.tooz_agents,
            processes=args.tooz_processes,
            force_downs=args.tooz_force_downs,
            poll_interval=args.tooz_poll_interval,
            backend_url=args.tooz_url,
            report_interval=args.tooz_report_interval,
            service_down_time=args.tooz_service_down_time,
            quiet_listings=args.tooz_quiet_listings,
            task_hosts=args.tooz_task_hosts,
            task_interval=args.tooz_task_interval,
            transport_url=args.rpc_transport_url,
            workers=args.workers, threads=args.threads)
        figures = tooz_liveness.measure(database, uuids, args.tooz_hosts,
                                        options)
        figures['db_one_per_call'] = heartbeats.measure(
            database.url_text, args.heartbeat_processes,
            args.heartbeat_threads, args.heartbeat_seconds)
        figures['total_seconds'] = round(time.monotonic() - started, 1)
        return figures
    finally:
        engine.dispose()
        database.drop()


def parse_args(argv):
    parser = argparse.ArgumentParser(
        prog='python -m tools.benchmark',
        description=tools.benchmark.__doc__.split('\n\n')[0])
    parser.add_argument('--hosts', default='1000,5000,10000',
                        help='comma-separated host counts')
    parser.add_argument('--db-url', help='a database server to create a '
                        'fresh database on (default: a temporary SQLite '
                        'file), e.g. postgresql+psycopg://postgres@'
                        '127.0.0.1/postgres')
    parser.add_argument('--json', help='write the figures to this file')
    parser.add_argument('--workers', type=int, default=2,
                        help='API worker processes (default 2)')
    parser.add_argument('--threads', type=int, default=8,
                        help='threads per API worker (default 8)')
    parser.add_argument('--iterations', type=int, default=20,
                        help='requests per listing at most (default 20)')
    parser.add_argument('--budget', type=float, default=6.0,
                        help='seconds per listing at most, 3 requests at '
                             'least (default 6)')
    parser.add_argument('--sequential', type=int, default=150,
                        help='hosts forced down and up again one after '
                             'another, per microversion (default 150)')
    parser.add_argument('--concurrent', type=int, default=40,
                        help='hosts per client with 8 clients (default 40)')
    parser.add_argument('--http-path', type=int, default=200,
                        help='requests of each kind sent both in process '
                             'and over HTTP, to see what HTTP adds '
                             '(default 200; 0: none)')
    parser.add_argument('--sustain', type=float, default=5.0,
                        help='seconds of the sustained force-down run')
    parser.add_argument('--slow-clients', type=int, default=300,
                        help='slow or stalled connections held open beside '
                             '8 clients of mixed load, at the first host '
                             'count (default 300; 0 skips this run)')
    parser.add_argument('--slow-seconds', type=float, default=60.0,
                        help='seconds of mixed load, once without and once '
                             'with the slow connections (default 60)')
    parser.add_argument('--action-hosts', type=int, default=1000,
                        help='hosts of a real fake-driver agent whose '
                             'servers are stopped and started, at the first '
                             'host count (default 1000; 0 skips this run)')
    parser.add_argument('--action-sequential', type=int, default=50,
                        help='servers stopped and started one after another '
                             '(default 50)')
    parser.add_argument('--action-concurrent', type=int, default=10,
                        help='servers per client with 8 clients (default '
                             '10)')
    parser.add_argument('--evacuate-instances', type=int, default=100,
                        help='servers per failed host evacuated by 8 '
                             'clients, at the first host count (default '
                             '100; 0 skips this run)')
    parser.add_argument('--evacuate-hosts', type=int, default=10,
                        help='hosts failed at once in the second '
                             'evacuation run (default 10)')
    parser.add_argument('--evacuate-destinations', type=int, default=30,
                        help='hosts evacuated servers may go to (default '
                             '30: room for 10 hosts of 100 fake servers)')
    parser.add_argument('--host-wide-servers', type=int, default=1000,
                        help='servers on the forced-down host whose '
                             'host-wide operations are timed, at the first '
                             'host count (default 1000; 0 skips it)')
    parser.add_argument('--host-wide-rounds', type=int, default=10,
                        help='timed requests of each host-wide operation '
                             '(default 10)')
    parser.add_argument('--heartbeat-processes', type=int, default=2,
                        help='agent processes sending heartbeats (default 2)')
    parser.add_argument('--heartbeat-threads', type=int, default=4,
                        help='threads per agent process (default 4)')
    parser.add_argument('--heartbeat-seconds', type=float, default=5.0)
    parser.add_argument('--heartbeat-batch', type=int, default=100,
                        help='hosts per agent in the batched heartbeat run '
                             '(default 100)')
    tooz = parser.add_argument_group(
        'liveness on the tooz driver', 'a run of its own, after the host '
        'counts of --hosts (which may be empty: --hosts=)')
    tooz.add_argument('--tooz-hosts', type=int, default=0,
                      help='hosts heartbeating through the tooz driver '
                           'while an API on it is checked (default 0: no '
                           'such run), e.g. 100000')
    tooz.add_argument('--tooz-seconds', type=float, default=120.0,
                      help='seconds measured once every host heartbeats '
                           '(default 120)')
    tooz.add_argument('--tooz-agents', type=int, default=2000,
                      help='simulated agents sharing the hosts, one '
                           'backend connection each (default 2000)')
    tooz.add_argument('--tooz-processes', type=int, default=4,
                      help='processes running the agents (default 4)')
    tooz.add_argument('--tooz-task-hosts', type=int, default=0,
                      help='hosts of a real agent on the tooz driver whose '
                           'servers are stopped and started while the run '
                           'lasts, told over RPC with --rpc-transport-url '
                           '(default 0: none)')
    tooz.add_argument('--tooz-task-interval', type=float, default=1.0,
                      help='seconds between two of those stops or starts '
                           '(default 1)')
    tooz.add_argument('--tooz-force-downs', type=int, default=20,
                      help='hosts forced down during the run, one before '
                           'each listing (default 20)')
    tooz.add_argument('--tooz-poll-interval', type=float, default=1.0,
                      help='seconds between two listings of the checker '
                           '(default 1)')
    tooz.add_argument('--tooz-quiet-listings', type=int, default=3,
                      help='listings at each microversion timed once the '
                           'agents stopped, while the backend still holds '
                           'their members (default 3)')
    tooz.add_argument('--tooz-url', default='redis://127.0.0.1:6379',
                      help='coordination backend; the run adds a tooz '
                           'namespace of its own and, on Redis, deletes '
                           'its keys at the end')
    tooz.add_argument('--tooz-report-interval', type=int, default=10,
                      help='seconds between two heartbeats of a host '
                           '(default 10)')
    tooz.add_argument('--tooz-service-down-time', type=int, default=60,
                      help='service_down_time of the agents and the API '
                           '(default 60)')
    rpc = parser.add_argument_group(
        'tasks over RPC', 'a run of its own, after the others: the stop '
        'and start and the evacuation runs (sized by their options above), '
        'looked for and then cast, and idle agents in each mode')
    rpc.add_argument('--rpc-transport-url',
                     help='the broker to cast tasks through (default: no '
                          'such run), e.g. rabbit://guest:guest@127.0.0.1:'
                          '5672/')
    rpc.add_argument('--rpc-one-agent', action='store_true',
                     help='in the RPC mode, stop and start the servers of '
                          'one agent of --action-hosts hosts (one queue) '
                          'rather than of one simulated agent per host')
    rpc.add_argument('--rpc-listener-processes', type=int, default=10,
                     help='processes sharing the simulated one-host agents '
                          'of the RPC mode, so that their listening threads '
                          'do not all wait for one interpreter (default 10)')
    rpc.add_argument('--idle-agents', type=int, default=20,
                     help='agent processes of one host each whose idle '
                          'cost is counted, on PostgreSQL only (default '
                          '20; 0 skips it)')
    rpc.add_argument('--idle-seconds', type=float, default=60.0,
                     help='seconds each mode\'s idle agents are counted '
                          '(default 60)')
    builds = parser.add_argument_group(
        'servers created and deleted', 'a run of its own, after the host '
        'counts: on a fresh database, one agent of --build-hosts hosts '
        '(every 10th disabled, every 25th forced down), its tasks looked '
        'for, then, with --rpc-transport-url, told over RPC')
    builds.add_argument('--build-hosts', type=int, default=0,
                        help='hosts of the agent servers are created on '
                             '(default 0: no such run), e.g. 1000')
    builds.add_argument('--build-sequential', type=int, default=100,
                        help='servers created, seen ACTIVE, deleted and '
                             'seen gone one after another (default 100)')
    builds.add_argument('--build-concurrent', type=int, default=100,
                        help='servers each of 8 clients creates, then '
                             'deletes (default 100)')
    args = parser.parse_args(argv)
    args.hosts = [int(value) for value in args.hosts.split(',') if value]
    return args


def main(argv=None):
    args = parse_args(sys.argv[1:] if argv is None else argv)
    objects.register_all()
    # The heartbeats of forced-down hosts warn each time; not news here.
    logging.getLogger('nova_forcedown').setLevel(logging.ERROR)
    figures = {'backend': sa.engine.make_url(args.db_url).get_backend_name()
               if args.db_url else 'sqlite',
               'workers': args.workers, 'threads': args.threads,
               'machine': report.machine(),
               'date': datetime.datetime.utcnow().strftime('%Y-%m-%d %H:%M'),
               'runs': []}
    for hosts in args.hosts:
        print('%d hosts...' % hosts, file=sys.stderr, flush=True)
        figures['runs'].append(run_one(args, hosts))
    if args.tooz_hosts:
        print('%d hosts on the tooz driver...' % args.tooz_hosts,
              file=sys.stderr, flush=True)
        figures['tooz'] = run_tooz(args)
    if args.rpc_transport_url:
        figures['rpc'] = rpc_run.measure(args)
    if args.build_hosts:
        figures['builds'] = server_builds.measure(args)
    report.print_table(figures)
    if args.json:
        with open(args.json, 'w') as output:
            json.dump(figures, output, indent=2, sort_keys=True)
    return 0
