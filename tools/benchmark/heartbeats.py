"""Heartbeats of the DB servicegroup driver, sent as agents send them.

Agent processes forked from this one share the seeded computes and report
for them in a loop, straight to the database (the API is not involved).
"""

import concurrent.futures
import contextlib
import itertools
import logging
import multiprocessing
import threading
import time

from nova_forcedown import conf as nf_conf
from nova_forcedown import context as nf_context
from nova_forcedown.db import engine as db_engine
from nova_forcedown.objects import service as service_obj
from nova_forcedown.servicegroup.drivers import db as db_driver
from tools.benchmark import cpu


def _agent(url, process, processes, threads, seconds, batch):
    """One agent process: heartbeats of its share of the computes.

    Each thread reports ``batch`` services at a time, with report_state
    when that is one. Returns (heartbeats, failures, seconds, CPU seconds
    of this process: SQLite's work included).
    """
    # The heartbeats of forced-down hosts warn each time; not news here.
    logging.getLogger('nova_forcedown').setLevel(logging.ERROR)
    with agent_database(url):
        services = service_obj.ServiceList.get_all(
            nf_context.get_admin_context(), binary='nova-compute')
        return _report(list(services)[process::processes], threads,
                       seconds, batch)


@contextlib.contextmanager
def agent_database(url):
    """The database layer of this process, on ``url``, as an agent's."""
    conf = nf_conf.make_conf([], default_config_files=[],
                             default_config_dirs=[])
    conf.set_override('connection', url, group='database')
    manager = db_engine.context_manager.make_new_manager()
    db_engine.configure(conf, manager)
    reset = db_engine.context_manager.patch_factory(manager)
    try:
        yield
    finally:
        reset()
        manager.writer.get_engine().dispose()


def _report(services, threads, seconds, batch):
    """Heartbeats for ``services`` from ``threads`` threads for ``seconds``."""
    counts, failures = [0] * threads, []
    deadline = time.monotonic() + seconds

    def beat(worker):
        mine = services[worker::threads]
        chunks = [mine[first:first + batch]
                  for first in range(0, len(mine), batch)]
        for chunk in itertools.cycle(chunks):
            if time.monotonic() > deadline:
                return
            try:
                if batch == 1:
                    db_driver.DbDriver.report_state(chunk[0])
                else:
                    db_driver.DbDriver.report_states(chunk)
                counts[worker] += len(chunk)
            except Exception as exc:  # noqa: counted, not fatal
                failures.append(repr(exc))
    start, cpu_start = time.perf_counter(), time.process_time()
    workers = [threading.Thread(target=beat, args=(worker,))
               for worker in range(threads)]
    for worker in workers:
        worker.start()
    for worker in workers:
        worker.join()
    return (sum(counts), failures, time.perf_counter() - start,
            time.process_time() - cpu_start)


def measure(url, processes, threads, seconds, batch=1):
    """The DB driver's heartbeats of the N computes, as agents send them.

    Heartbeats come from many agent processes; here ``processes`` processes
    of ``threads`` threads each share the computes and report in a loop for
    ``seconds``, ``batch`` services per call. The CPU they spend is
    that of the agent processes and, on PostgreSQL, of the backends
    serving them.
    """
    matcher = cpu.database_server(url)
    server = cpu.Sampler(matcher) if matcher else None
    if server:
        server.start()
    context = multiprocessing.get_context('fork')
    with concurrent.futures.ProcessPoolExecutor(
            processes, mp_context=context) as pool:
        outcomes = list(pool.map(
            _agent, [url] * processes, range(processes),
            [processes] * processes, [threads] * processes,
            [seconds] * processes, [batch] * processes))
    total = sum(outcome[0] for outcome in outcomes)
    failures = [failure for outcome in outcomes for failure in outcome[1]]
    elapsed = max(outcome[2] for outcome in outcomes)
    agents_cpu = sum(outcome[3] for outcome in outcomes)
    server_cpu = server.stop() if server else None
    return {'processes': processes, 'threads': threads, 'batch': batch,
            'heartbeats': total,
            'seconds': round(elapsed, 2),
            'per_second': round(total / elapsed, 1),
            'failures': len(failures),
            **per_cpu_second(total, agents_cpu, server_cpu),
            'failure_examples': sorted(set(failures))[:3]}


def per_cpu_second(heartbeats, agents_cpu, server_cpu):
    """Heartbeats per CPU second of their senders, and with their server.

    ``server_cpu`` is None where the server's CPU cannot be told apart.
    """
    figures = {'agents_cpu_s': round(agents_cpu, 2),
               'server_cpu_s': server_cpu,
               'per_agent_cpu_second': round(heartbeats / agents_cpu)
               if agents_cpu else None,
               'per_cpu_second': None}
    if server_cpu is not None and agents_cpu + server_cpu:
        figures['per_cpu_second'] = round(
            heartbeats / (agents_cpu + server_cpu))
    return figures
