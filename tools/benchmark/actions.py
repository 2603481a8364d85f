"""Stop and start: from the request to the host's result.

A real agent process (``nova-forcedown-compute``, fake driver) runs
``action_hosts`` more hosts with one server each, on the benchmark's
database; clients stop and start those servers and poll each one until
its host has carried the task out. Two figures per run: the time from
the POST to the first GET that shows the result (what an instance-HA
tool waits, give or take its polling), and, from the instance action
records, the time from the action's record to the end of its host's
event (the request reaching its agent and completing, without the
client's polling).
"""

import json
import time

import sqlalchemy as sa

from nova_forcedown.db import models
from tools.benchmark import agents
from tools.benchmark import clients
from tools.benchmark import latencies

HOST_PREFIX = 'action-'
# Seconds between two polls of a server, and before one counts as lost.
POLL_SECONDS = 0.05
TIMEOUT_SECONDS = 10


def carried_out(client, uuid, action, status, times, failures):
    """POST ``action``, then poll until the server shows ``status``."""
    start = time.perf_counter()
    answer, _, body = client.request('POST', '/servers/%s/action' % uuid,
                                     '2.1', {action: None})
    if answer != 202:
        failures.append('%s %s' % (answer, body[:200]))
        return
    deadline = time.monotonic() + TIMEOUT_SECONDS
    while time.monotonic() < deadline:
        answer, _, body = client.request('GET', '/servers/' + uuid, '2.1')
        if answer == 200 and json.loads(body)['server']['status'] == status:
            times.append(time.perf_counter() - start)
            return
        time.sleep(POLL_SECONDS)
    failures.append('%s of %s not done in %d s' % (action, uuid,
                                                   TIMEOUT_SECONDS))


def _stop_start_loop(port, uuids):
    """Stop then start each server; (latencies, failures, no counts)."""
    client = clients.Client(port)
    times, failures = [], []
    try:
        for uuid in uuids:
            carried_out(client, uuid, 'os-stop', 'SHUTOFF', times, failures)
            carried_out(client, uuid, 'os-start', 'ACTIVE', times, failures)
    finally:
        client.close()
    return times, failures, set()


def recorded_to_done(engine, uuids):
    """Seconds from each action's record to the end of its event.

    For the stop and start actions of the servers ``uuids``.
    """
    actions = models.InstanceAction.__table__
    events = models.InstanceActionEvent.__table__
    query = (sa.select(actions.c.start_time, events.c.finish_time)
             .join(events, events.c.action_id == actions.c.id)
             .where(actions.c.action.in_(('stop', 'start')),
                    events.c.finish_time.is_not(None),
                    actions.c.instance_uuid.in_(list(uuids))))
    with engine.connect() as connection:
        return [(finish - start).total_seconds()
                for start, finish in connection.execute(query)]


def measure(api, engine, hosts, sequential, concurrent_each,
            one_agent_per_host=False, while_running=None, processes=1):
    """Latencies of stop and start, one at a time and from 8 clients.

    ``one_agent_per_host``: the hosts' agents are simulated, one RPC
    server each (``one_host_agents``), rather than one agent for all,
    spread over ``processes`` processes.
    ``while_running(processes)``: figures read once the agents are up.
    """
    if one_agent_per_host:
        started = [agents.Agent(api, '%s%d-' % (HOST_PREFIX, index),
                                share, 1,
                                module='tools.benchmark.one_host_agents',
                                ready='listening as')
                   for index, share in enumerate(_shares(hosts, processes))]
    else:
        started = [agents.Agent(api, HOST_PREFIX, hosts, 1)]
    try:
        uuids = [uuid for agent in started for uuid in agent.start(engine)]
        extra = (while_running([agent.process for agent in started])
                 if while_running else {})
        alone = uuids[:sequential]
        shares = [uuids[sequential:][index::clients.CLIENTS]
                  [:concurrent_each] for index in range(clients.CLIENTS)]
        results = {}
        for label, run, acted_on in (
                ('sequential', lambda: _stop_start_loop(api.port, alone) +
                 (None,), alone),
                ('8 clients', lambda: clients.concurrently(
                    lambda index: _stop_start_loop(api.port, shares[index])),
                 [uuid for share in shares for uuid in share])):
            results['%s, request to result seen' % label] = (
                latencies.summary(*run()))
            results['%s, recorded to done' % label] = latencies.summary(
                recorded_to_done(engine, acted_on), [], set(), None)
        return dict(extra, agent_hosts=hosts, runs=results,
                    one_agent_per_host=one_agent_per_host,
                    agent_processes=len(started))
    finally:
        for agent in started:
            agent.stop()


def _shares(hosts, processes):
    """``hosts`` split as evenly as can be among at most ``processes``."""
    each, more = divmod(hosts, processes)
    counts = [each + (index < more) for index in range(processes)]
    return [count for count in counts if count]
