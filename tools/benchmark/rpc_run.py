"""Tasks looked for and tasks told: the polling and RPC modes side by side.

A run of its own (``--rpc-transport-url``), after the host counts: for
each mode, a fresh database, an API server configured for it (the RPC
mode's with the transport URL, which its agents read too), then the stop
and start run of ``actions`` (in the RPC mode with one simulated agent
per host, each its own RPC server: ``one_host_agents``, in
``--rpc-listener-processes`` processes) and the
evacuation of one host of
``--evacuate-instances`` servers of ``evacuations``; then, on PostgreSQL,
what idle agents cost the database in each mode (``idle_agents``), and
what the broker holds without them and with them (its queues,
connections and memory, read with ``rabbitmqctl`` when it is on this
machine): the figures the sizing of a broker for many hosts starts from.
"""

import shutil
import subprocess
import sys

import psutil
import sqlalchemy as sa

from nova_forcedown.db import schema
from tools.benchmark import actions
from tools.benchmark import evacuations
from tools.benchmark import idle_agents
from tools.benchmark import seeding
from tools.benchmark import server

# Hosts of the seeded database of each mode, besides the runs' own.
SEEDED_HOSTS = 100


def measure(args):
    """{'polling': figures, 'rpc': figures, 'idle': figures or None}."""
    figures = {}
    if not (args.action_hosts or args.evacuate_instances):
        modes = ()
    else:
        modes = ('polling', None), ('rpc', {'DEFAULT': {
            'transport_url': args.rpc_transport_url}})
    for mode, options in modes:
        print('tasks, %s mode...' % mode, file=sys.stderr, flush=True)
        figures[mode] = _mode(args, mode, options)
    figures['idle'] = _idle(args) if args.idle_agents else None
    return figures


def _on_a_database(args, work):
    """``work(database, engine)`` on a fresh, seeded database."""
    database = seeding.Database(args.db_url)
    engine = sa.create_engine(database.url, poolclass=sa.pool.NullPool)
    try:
        schema.db_sync(engine)
        seeding.seed(engine, SEEDED_HOSTS)
        return work(database, engine)
    finally:
        engine.dispose()
        database.drop()


def _mode(args, mode, options):
    per_host = mode == 'rpc' and not args.rpc_one_agent

    def work(database, engine):
        api = server.Server(database, args.workers, args.threads, name=mode,
                            options=options)
        found = {}
        with api.serving():
            if args.action_hosts:
                found['actions'] = actions.measure(
                    api, engine, args.action_hosts, args.action_sequential,
                    args.action_concurrent, one_agent_per_host=per_host,
                    while_running=_listening if per_host else None,
                    processes=args.rpc_listener_processes)
            if args.evacuate_instances:
                found['evacuation'] = evacuations.measure(
                    api, engine, mode, 1, args.evacuate_instances,
                    args.evacuate_destinations)
        return found
    return _on_a_database(args, work)


def _idle(args):
    def work(database, engine):
        api = server.Server(database, args.workers, args.threads,
                            name='idle')
        return idle_agents.measure(api, engine, args.idle_agents,
                                   args.idle_seconds, args.rpc_transport_url,
                                   args.tooz_url, broker_figures)
    print('idle agents...', file=sys.stderr, flush=True)
    return _on_a_database(args, work)


def _listening(processes):
    """The simulated agents' processes and the broker, once all listen."""
    found = [psutil.Process(process.pid) for process in processes]
    rss = sum(process.memory_info().rss for process in found)
    return {'listeners_rss_mb': round(rss / 2 ** 20),
            'listeners_threads': sum(process.num_threads()
                                     for process in found),
            'broker': broker_figures()}


def broker_figures():
    """Queues, connections and memory of the local RabbitMQ, or None."""
    if shutil.which('rabbitmqctl') is None:
        return None
    try:
        queues = _lines('list_queues', 'name')
        connections = _lines('list_connections', 'name')
        memory = _lines('eval',
                        'erlang:memory(total) div 1048576.')
    except (OSError, subprocess.SubprocessError):
        return None
    return {'queues': len(queues),
            'compute_queues': sum(1 for name in queues
                                  if name.startswith('compute')),
            'connections': len(connections),
            'memory_mb': int(memory[-1]) if memory else None}


def _lines(*command):
    result = subprocess.run(['rabbitmqctl', '-q', *command], check=True,
                            capture_output=True, text=True, timeout=60)
    return [line for line in result.stdout.splitlines()
            if line and not line.startswith('name')]
