"""Stop and start while the tooz run's hosts heartbeat: tasks at scale.

With ``--tooz-task-hosts N`` a real agent (``nova-forcedown-compute``,
fake driver, N hosts of one server each, on the tooz driver of the run's
API and, with ``--rpc-transport-url``, told of its tasks over RPC) joins
the run's hosts, and one client stops or starts one of its servers every
``--tooz-task-interval`` seconds while the listings are checked. Its
figures: from the request to the result seen by the client (polling
every 50 ms), and from the action's record to its host's end of it.
"""

import threading
import time

import sqlalchemy as sa

from tools.benchmark import actions
from tools.benchmark import agents
from tools.benchmark import clients
from tools.benchmark import latencies

HOST_PREFIX = 'tooz-tasks-'


class Tasks:
    """The agent and the client's loop; :meth:`stop` returns the figures."""

    def __init__(self, api, db_url, hosts, interval):
        self._api = api
        self._engine = sa.create_engine(db_url, poolclass=sa.pool.NullPool)
        self._agent = agents.Agent(api, HOST_PREFIX, hosts, 1)
        self._interval = interval
        self._stopping = threading.Event()
        self._thread = threading.Thread(target=self._loop, daemon=True)
        self._uuids = []
        self._times, self._failures = [], []

    def start(self):
        self._uuids = self._agent.start(self._engine)
        self._thread.start()
        return self

    def stop(self):
        self._stopping.set()
        self._thread.join(actions.TIMEOUT_SECONDS * 2 + 5)
        try:
            done = actions.recorded_to_done(self._engine, self._uuids)
            return {
                'agent_hosts': len(self._uuids),
                'interval_s': self._interval,
                'request to result seen': latencies.summary(
                    self._times, self._failures, set(), None),
                'recorded to done': latencies.summary(done, [], set(),
                                                      None)}
        finally:
            self._agent.stop()
            self._engine.dispose()

    def _loop(self):
        """A stop or start every interval, each server in turn."""
        client = clients.Client(self._api.port)
        stopped = set()
        turn = 0
        try:
            while not self._stopping.is_set():
                began = time.monotonic()
                uuid = self._uuids[turn % len(self._uuids)]
                turn += 1
                if uuid in stopped:
                    action, status = 'os-start', 'ACTIVE'
                    stopped.discard(uuid)
                else:
                    action, status = 'os-stop', 'SHUTOFF'
                    stopped.add(uuid)
                actions.carried_out(client, uuid, action, status,
                                    self._times, self._failures)
                self._stopping.wait(
                    max(0.0, self._interval - (time.monotonic() - began)))
        finally:
            client.close()
