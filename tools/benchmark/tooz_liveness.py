"""Liveness on the tooz servicegroup driver at scale, seen through the API.

Every compute host of a seeded database heartbeats every report_interval
to the coordination backend with ``BackendHeartbeat.tick()`` (the agents'
own code: a tooz member, coordinator and heartbeat key of its own per
host, joined to the group again every database_report_interval) and, every
database_report_interval, to the database with
``DbDriver.report_states()``, as an agent on the tooz driver does. The
hosts are shared by simulated agents (``agents`` of them, hosts/agents
hosts each) run by a few forked processes, one thread per store each.
Meanwhile a checker polls the services listing of an API whose
servicegroup driver is ``tooz``: it counts heartbeating hosts reported
down (false downs), forces a host down before each listing and checks the
listing shows it down, times the listings, and asks the backend itself
which hosts it holds alive.

What is simulated, and why: on tooz's Redis driver the coordinators of
one simulated agent share that agent's connection
(``tooz_agents.connection_per_agent``),
so the backend serves ``agents`` connections, not one per host. Redis
takes 10,000 clients unless told otherwise (this one is shared), and each
coordinator costs its process a connection and a file descriptor. Every
heartbeat is still one command on its own key, as one agent per host sends
it. Other backends get a connection per host.
"""

import concurrent.futures
import itertools
import json
import multiprocessing
import os
import statistics
import sys
import time

from tooz import coordination

from nova_forcedown.conf import coordination as coordination_conf
from nova_forcedown.servicegroup import membership
from tools.benchmark import clients
from tools.benchmark import cpu
from tools.benchmark import heartbeats
from tools.benchmark import latencies
from tools.benchmark import seeding
from tools.benchmark import server as bench_server
from tools.benchmark import tooz_agents
from tools.benchmark import tooz_backend
from tools.benchmark import tooz_tasks

VERSIONS = ('2.53', '2.1')
# Seconds the agents may take to start every host's coordinator.
WARM_UP_LIMIT = 900
# Seconds the checker waits for the backend's list of members.
BACKEND_READ_TIMEOUT = 5.0


class _Checker:
    """Polls the services listing; false downs, force-downs, latencies."""

    def __init__(self, port, uuids, hosts, force_downs, observer):
        self.client = clients.Client(port)
        self.hosts = hosts
        self.uuids = uuids
        self.observer = observer
        # The seeded forced-down hosts (every 50th), then the run's.
        self.forced = {seeding.host_name(index)
                       for index in range(50, hosts + 1, 50)}
        step = max(1, hosts // max(1, force_downs))
        self.to_force = [seeding.host_name(index)
                         for index in range(7, hosts + 1, step)
                         if index % 50][:force_downs]
        self.times = {version: [] for version in VERSIONS}
        self.failures = []
        self.listings = self.listings_with_false_downs = 0
        self.false_downs = 0
        self.false_down_examples = set()
        self.forced_down_at_once = []
        self.forced_not_down = 0
        self.incomplete_listings = 0
        self.backend_misses = []
        self.backend_timeouts = 0
        self.backend_read = None
        self.reader = concurrent.futures.ThreadPoolExecutor(1)
        self.load = []

    def check_once(self, version):
        """Force the next host down, then list and judge every host."""
        just_forced = None
        if self.to_force:
            just_forced = self.to_force.pop(0)
            status, _, body = self.client.request(
                'PUT', '/os-services/%s' % self.uuids[just_forced], '2.53',
                {'forced_down': True})
            if status != 200:
                self.failures.append('force-down %s: %s %s' % (
                    just_forced, status, body[:200]))
            self.forced.add(just_forced)
        start = time.perf_counter()
        status, _, body = self.client.request('GET', '/os-services',
                                              version)
        elapsed = time.perf_counter() - start
        if status != 200:
            self.failures.append('listing: %s %s' % (status, body[:200]))
            return
        self.times[version].append(elapsed)
        self._judge(json.loads(body)['services'], just_forced)
        self._ask_backend()
        self.load.append(os.getloadavg()[0])

    def _judge(self, services, just_forced):
        # The seeded hosts only: not the real agent of tooz_tasks.
        states = {service['host']: service['state'] for service in services
                  if service['binary'] == 'nova-compute' and
                  not service['host'].startswith(tooz_tasks.HOST_PREFIX)}
        self.listings += 1
        if len(states) != self.hosts:
            self.incomplete_listings += 1
        false = [host for host, state in states.items()
                 if state == 'down' and host not in self.forced]
        if false:
            self.listings_with_false_downs += 1
            self.false_downs += len(false)
            self.false_down_examples.update(false[:3])
        self.forced_not_down += sum(1 for host in self.forced
                                    if states.get(host) != 'down')
        if just_forced is not None:
            self.forced_down_at_once.append(
                states.get(just_forced) == 'down')

    def _ask_backend(self):
        """Heartbeating hosts the backend itself does not hold alive.

        A read that takes longer than BACKEND_READ_TIMEOUT is left to
        finish in its thread and counted; none other starts meanwhile.
        """
        if self.backend_read is None:
            self.backend_read = self.reader.submit(
                lambda: self.observer.get_members(
                    membership.GROUP_ID).get())
        try:
            members = self.backend_read.result(BACKEND_READ_TIMEOUT)
        except concurrent.futures.TimeoutError:
            self.backend_timeouts += 1
            return
        except coordination.ToozError as exc:
            self.failures.append('backend: %s' % exc)
            return
        finally:
            if self.backend_read.done():
                self.backend_read = None
        self.backend_misses.append(sum(
            1 for index in range(1, self.hosts + 1)
            if b'nova-compute:' + seeding.host_name(index).encode()
            not in members))

    def figures(self):
        listings = {}
        for version, times in self.times.items():
            listings[version] = {
                'requests': len(times),
                'median_ms': latencies.ms(statistics.median(times))
                if times else None,
                'p99_ms': latencies.ms(latencies.percentile(times, 0.99)),
                'max_ms': latencies.ms(max(times)) if times else None}
        return {
            'listings': listings,
            'checks': self.listings,
            'false_downs': self.false_downs,
            'listings_with_false_downs': self.listings_with_false_downs,
            'false_down_examples': sorted(self.false_down_examples)[:5],
            'forced_by_run': len(self.forced_down_at_once),
            'forced_down_at_once': sum(self.forced_down_at_once),
            'forced_seen_up_later': self.forced_not_down,
            'incomplete_listings': self.incomplete_listings,
            'backend_misses_max': max(self.backend_misses, default=None),
            'backend_checks': len(self.backend_misses),
            'backend_read_timeouts': self.backend_timeouts,
            'failures': len(self.failures),
            'failure_examples': self.failures[:3],
            'load_1min_max': max(self.load, default=None),
        }


class _Totals:
    """Sums over the agent processes of the shared counters."""

    def __init__(self, counters, processes):
        self.counters = counters
        self.processes = processes

    def __call__(self, slot):
        return sum(self.counters[process * tooz_agents.SLOTS + slot]
                   for process in range(self.processes))

    def max(self, slot):
        return max(self.counters[process * tooz_agents.SLOTS + slot]
                   for process in range(self.processes))


def measure(database, uuids, hosts, options):
    """Figures of ``hosts`` hosts on the tooz driver for options.seconds.

    ``options``: seconds, agents, processes, force_downs, poll_interval,
    backend_url, report_interval, service_down_time, workers, threads,
    quiet_listings (rounds of listings once the agents stopped),
    task_hosts, task_interval and transport_url (:mod:`tooz_tasks`).
    """
    namespace = 'nf-bench-%d-%d' % (os.getpid(), int(time.time()))
    backend_url = tooz_backend.namespaced(options.backend_url, namespace)
    conf_args = (backend_url, options.report_interval,
                 options.service_down_time)
    services = tooz_agents.load_services(database.url_text)
    context = multiprocessing.get_context('fork')
    counters = context.Array('d', options.processes * tooz_agents.SLOTS,
                             lock=False)
    window, stop = context.Event(), context.Event()
    agents_each = max(1, options.agents // options.processes)
    processes = [context.Process(
        target=tooz_agents.agent_process, daemon=True, args=(
            database.url_text, services[index::options.processes],
            conf_args, agents_each, counters, index, window, stop))
        for index in range(options.processes)]
    del services
    totals = _Totals(counters, options.processes)
    started = time.monotonic()
    for process in processes:
        process.start()
    api = bench_server.Server(
        database, options.workers, options.threads, name='tooz-api',
        options={'DEFAULT': dict({
            'servicegroup_driver': 'tooz',
            'report_interval': options.report_interval,
            'service_down_time': options.service_down_time},
            **({'transport_url': options.transport_url}
               if options.transport_url else {})),
            'coordination': {'backend_url': backend_url}})
    observer = tasks = None
    try:
        api.start()
        agent_conf = tooz_agents.agent_conf(*conf_args)
        warm_up = _wait_warm(
            totals, agents_each * options.processes,
            coordination_conf.database_report_interval(agent_conf),
            processes)
        observer = membership.get_coordinator(
            agent_conf.coordination.backend_url,
            b'nova-forcedown-benchmark-checker',
            agent_conf.service_down_time)
        if options.task_hosts:
            tasks = tooz_tasks.Tasks(api, database.url_text,
                                     options.task_hosts,
                                     options.task_interval).start()
        figures, forced = _window(api, uuids, hosts, options, totals,
                                  processes, window, observer,
                                  database.url_text, backend_url)
        if tasks is not None:
            figures['tasks'], tasks = tasks.stop(), None
        _stop_agents(stop, processes)
        figures['after_the_agents'] = _quiet_listings(
            api, uuids, hosts, observer, forced, options.quiet_listings)
        figures.update(
            hosts=hosts, agents=agents_each * options.processes,
            processes=options.processes, namespace=namespace,
            warm_up_s=round(warm_up - started, 1),
            report_interval=options.report_interval,
            service_down_time=options.service_down_time)
        return figures
    except Exception:
        if api.process is not None:
            sys.stderr.write(api.log())
        raise
    finally:
        if tasks is not None:
            tasks.stop()
        _stop_agents(stop, processes)
        if observer is not None:
            observer.stop()
        api.stop()
        tooz_backend.forget(backend_url, namespace)


def _stop_agents(stop, processes):
    stop.set()
    for process in processes:
        process.join(30)
        if process.is_alive():
            process.kill()


def _quiet_listings(api, uuids, hosts, observer, forced, rounds):
    """Listings once the agents stopped, while their members live on.

    The backend still holds every member for service_down_time after its
    last heartbeat, so each listing judges the hosts as in the window,
    without the simulated agents competing for the CPUs.
    """
    checker = _Checker(api.port, uuids, hosts, 0, observer)
    checker.forced = forced
    try:
        for version in VERSIONS * rounds:
            checker.check_once(version)
    finally:
        checker.reader.shutdown(wait=False)
    return checker.figures()


def _wait_warm(totals, agents, settle, processes):
    """When every agent has ticked once, plus ``settle`` seconds.

    Members whose heartbeat expired while the agents were starting are
    back in the group once each agent rejoined, which ``settle`` (one
    database_report_interval) leaves time for. The loops may still be
    behind then, on a machine too small: the window shows it.
    """
    deadline = time.monotonic() + WARM_UP_LIMIT
    while totals(tooz_agents.WARMED) < agents:
        if not all(process.is_alive() for process in processes):
            raise RuntimeError('an agent process exited during warm-up')
        if time.monotonic() > deadline:
            raise RuntimeError('the agents did not warm up in %d s'
                               % WARM_UP_LIMIT)
        time.sleep(0.5)
    warm = time.monotonic()
    time.sleep(settle)
    return warm


def _window(api, uuids, hosts, options, totals, processes, window,
            observer, db_url, backend_url):
    """The measured seconds: agents' counters, CPU, the checker's work."""
    redis_cpu = tooz_backend.backend_sampler(backend_url)
    matcher = cpu.database_server(db_url)
    database_cpu = cpu.Sampler(matcher) if matcher else None
    rss = bench_server.RssSampler(api)
    for sampler in (redis_cpu, database_cpu, rss):
        if sampler is not None:
            sampler.start()
    checker = _Checker(api.port, uuids, hosts, options.force_downs,
                       observer)
    before = {slot: totals(slot) for slot in range(tooz_agents.SLOTS)}
    commands_before = tooz_backend.redis_commands(backend_url)
    late_at_start = totals.max(tooz_agents.LATE_NOW)
    load_before = os.getloadavg()
    window.set()
    start = time.monotonic()
    try:
        for version in itertools.cycle(VERSIONS):
            if time.monotonic() - start >= options.seconds:
                break
            if not all(process.is_alive() for process in processes):
                raise RuntimeError('an agent process exited')
            checker.check_once(version)
            time.sleep(options.poll_interval)
    finally:
        elapsed = time.monotonic() - start
        window.clear()
        rss.stop()
    spent = {slot: totals(slot) - before[slot]
             for slot in range(tooz_agents.SLOTS)}
    commands_after = tooz_backend.redis_commands(backend_url)
    checker.reader.shutdown(wait=False)
    figures = checker.figures()
    figures.update(
        seconds=round(elapsed, 1),
        load_average_before=[round(value, 2) for value in load_before],
        load_average_after=[round(value, 2)
                            for value in os.getloadavg()],
        api_rss=rss.figures(),
        tooz=_rates(spent[tooz_agents.BEATS],
                    spent[tooz_agents.BEAT_FAILURES],
                    spent[tooz_agents.BEAT_CPU],
                    redis_cpu.stop() if redis_cpu else None, elapsed),
        database=_rates(spent[tooz_agents.DB_BEATS],
                        spent[tooz_agents.DB_FAILURES],
                        spent[tooz_agents.DB_CPU],
                        database_cpu.stop() if database_cpu else None,
                        elapsed))
    figures['tooz']['late_max_s'] = round(totals.max(tooz_agents.LATE_MAX), 2)
    figures['tooz']['late_at_start_s'] = round(late_at_start, 2)
    figures['redis_calls_per_second'] = {
        name: round((commands_after[name] - commands_before[name]) /
                    elapsed)
        for name in commands_after} if commands_after else None
    figures['tooz']['target_per_second'] = round(
        hosts / options.report_interval, 1)
    return figures, checker.forced


def _rates(beats, failures, agents_cpu, server_cpu, elapsed):
    return {'heartbeats': int(beats), 'failures': int(failures),
            'per_second': round(beats / elapsed, 1),
            **heartbeats.per_cpu_second(beats, agents_cpu, server_cpu)}
