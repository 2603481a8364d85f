"""The simulated agents of the tooz run: heartbeats of many hosts each.

Each agent process runs, in a thread per store, the heartbeats of its
hosts to the coordination backend and to the database, and adds what it
did to its slots of the shared counters. On tooz's Redis driver the
coordinators of one simulated agent share its connection
(:func:`connection_per_agent`).
"""

import contextlib
import itertools
import logging
import threading
import time

from tooz.drivers import redis as tooz_redis

from nova_forcedown import conf as nf_conf
from nova_forcedown.conf import coordination as coordination_conf
from nova_forcedown import context as nf_context
from nova_forcedown.objects import service as service_obj
from nova_forcedown.servicegroup import backend_heartbeat
from nova_forcedown.servicegroup.drivers import db as db_driver
from tools.benchmark import heartbeats

# Slots of each agent process in the shared counters.
(BEATS, BEAT_FAILURES, BEAT_CPU, LATE_MAX, LATE_NOW, WARMED,
 DB_BEATS, DB_FAILURES, DB_CPU) = range(9)
SLOTS = 9


def agent_conf(backend_url, report_interval, service_down_time):
    conf = nf_conf.make_conf([], default_config_files=[],
                             default_config_dirs=[])
    conf.set_override('servicegroup_driver', 'tooz')
    conf.set_override('report_interval', report_interval)
    conf.set_override('service_down_time', service_down_time)
    conf.set_override('backend_url', backend_url, group='coordination')
    return conf


@contextlib.contextmanager
def connection_per_agent(agent_of):
    """Coordinators made while ``agent_of()`` is the same share a client.

    Patches the Redis driver of tooz in this (forked) process only.
    """
    original = vars(tooz_redis.RedisDriver)['_make_client']
    shared = {}

    def make_client(cls, parsed_url, options, default_socket_timeout):
        agent = agent_of()
        if agent not in shared:
            shared[agent] = original.__func__(
                cls, parsed_url, options, default_socket_timeout)
        return shared[agent]
    tooz_redis.RedisDriver._make_client = classmethod(make_client)
    try:
        yield
    finally:
        tooz_redis.RedisDriver._make_client = original


class _Agents:
    """The simulated agents of one process, and its counters."""

    def __init__(self, conf, services, agents, counters, slot):
        size = -(-len(services) // agents)
        self.chunks = [services[first:first + size]
                       for first in range(0, len(services), size)]
        self.beats = [backend_heartbeat.BackendHeartbeat(conf, chunk)
                      for chunk in self.chunks]
        self.current = None
        self._conf = conf
        self._counters = counters
        self._base = slot * SLOTS

    def add(self, slot, value):
        self._counters[self._base + slot] += value

    def set(self, slot, value):
        self._counters[self._base + slot] = value

    def beat_loop(self, window, stop):
        """Tick each agent every report_interval, spread over it.

        A tick that is late (the loop is behind) runs at once: the loop
        catches up rather than skipping, and records how late it was.
        """
        interval = self._conf.report_interval
        started = time.monotonic()
        due = [started + interval * index / len(self.beats)
               for index in range(len(self.beats))]
        warmed = set()
        cpu_start = time.thread_time()
        for index in itertools.cycle(range(len(self.beats))):
            wait = due[index] - time.monotonic()
            if (wait > 0 and stop.wait(wait)) or stop.is_set():
                return
            late = max(0.0, -wait)
            self.set(LATE_NOW, late)
            if window.is_set():
                self.set(LATE_MAX, max(late, self._counters[
                    self._base + LATE_MAX]))
            self.current = index
            if self.beats[index].tick():
                self.add(BEATS, len(self.chunks[index]))
            else:
                self.add(BEAT_FAILURES, len(self.chunks[index]))
            if index not in warmed:
                warmed.add(index)
                self.add(WARMED, 1)
            self.set(BEAT_CPU, time.thread_time() - cpu_start)
            due[index] += interval

    def database_loop(self, stop):
        """Each agent's database heartbeat every database_report_interval."""
        interval = coordination_conf.database_report_interval(
            self._conf)
        cpu_start = time.thread_time()
        started = time.monotonic()
        for round_ in itertools.count():
            for index, chunk in enumerate(self.chunks):
                due = started + interval * (round_ + index / len(
                    self.chunks))
                if stop.wait(max(0.0, due - time.monotonic())):
                    return
                try:
                    gone = db_driver.DbDriver.report_states(chunk)
                    self.add(DB_BEATS, len(chunk) - len(gone))
                    self.add(DB_FAILURES, len(gone))
                except Exception:  # noqa: counted, not fatal
                    self.add(DB_FAILURES, len(chunk))
                self.set(DB_CPU, time.thread_time() - cpu_start)


def agent_process(db_url, services, conf_args, agents, counters, slot,
                  window, stop):
    """One forked process of simulated agents, until ``stop`` is set."""
    logging.getLogger('nova_forcedown').setLevel(logging.ERROR)
    logging.getLogger('tooz').setLevel(logging.ERROR)
    conf = agent_conf(*conf_args)
    with heartbeats.agent_database(db_url):
        mine = _Agents(conf, services, agents, counters, slot)
        database = threading.Thread(target=mine.database_loop,
                                    args=(stop,), daemon=True)
        database.start()
        with connection_per_agent(lambda: mine.current):
            mine.beat_loop(window, stop)
        database.join()


def load_services(db_url):
    """The compute services, as the agents' heartbeats take them."""
    with heartbeats.agent_database(db_url):
        services = service_obj.ServiceList.get_all(
            nf_context.get_admin_context(), binary='nova-compute')
        return sorted(services, key=lambda service: service.id)
