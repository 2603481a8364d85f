"""What the tool knows of each host, and which servers may be evacuated.

A host is ``up`` (its agent runs), ``crashed`` (its agent was killed: its
guests still run and it is never down, service_down_time being long),
``fencing`` (agent killed and powered off, its force-down under way),
``fenced`` (forced down: its servers are evacuable) or ``repairing`` (its
agent restarted, its force-up under way). Only the servers of fenced
hosts are evacuated, as fencing requires.

A repair must not race an evacuation: one accepted from a host whose
agent is back would leave a copy there. So every evacuation request is
sent under the shared side of :class:`Gate`, and a repair takes its
exclusive side to mark the host ``repairing`` and re-read where every
server is; a placement read before that is never used after it.

Each host also records whether its service is forced down, as the
tool's own force requests leave it (:meth:`Hosts.forcing`): a create
answered while that stayed true throughout must not be placed there.
"""

import contextlib
import random
import threading

import sqlalchemy as sa

UP = 'up'
CRASHED = 'crashed'
FENCING = 'fencing'
FENCED = 'fenced'
REPAIRING = 'repairing'


class Gate:
    """Many evacuations at once, or one repair's change alone."""

    def __init__(self):
        self._condition = threading.Condition()
        self._sharing = 0
        self._exclusive = False

    @contextlib.contextmanager
    def shared(self):
        with self._condition:
            self._condition.wait_for(lambda: not self._exclusive)
            self._sharing += 1
        try:
            yield
        finally:
            with self._condition:
                self._sharing -= 1
                self._condition.notify_all()

    @contextlib.contextmanager
    def exclusive(self):
        with self._condition:
            self._condition.wait_for(lambda: not self._exclusive)
            self._exclusive = True
            self._condition.wait_for(lambda: self._sharing == 0)
        try:
            yield
        finally:
            with self._condition:
                self._exclusive = False
                self._condition.notify_all()


class Host:

    def __init__(self, agent):
        self.agent = agent
        self.name = agent.host
        self.state = UP
        # Bumped at every change of state.
        self.generation = 0
        # An episode (a fault and its repair) owns the host.
        self.busy = False
        self.service_uuid = None
        # Whether the service is forced down (a force-down answered 200
        # and no force-up sent since), a count bumped at every force
        # request sent or answered, and those under way.
        self.forced_down = False
        self.force_generation = 0
        self.forcing = 0


class Hosts:
    """The hosts by name, their states and the servers' placement."""

    def __init__(self, agents, engine):
        self.by_name = {agent.host: Host(agent) for agent in agents}
        self.names = sorted(self.by_name)
        self.engine = engine
        self.gate = Gate()
        self._lock = threading.Lock()
        # uuid -> host, as last read; and the read's ticket.
        self._placement = {}
        self._ticket = 0
        self._installed = 0

    def set_state(self, name, state):
        with self._lock:
            host = self.by_name[name]
            host.state = state
            host.generation += 1

    def states(self):
        """{host: (state, generation)} now."""
        with self._lock:
            return {name: (host.state, host.generation)
                    for name, host in self.by_name.items()}

    def claim(self, candidates, rng):
        """A host, among the names in ``candidates``, that no episode owns.

        It is marked busy; :meth:`release` frees it. None if all are.
        """
        with self._lock:
            free = [name for name in candidates
                    if not self.by_name[name].busy]
            if not free:
                return None
            name = rng.choice(free)
            self.by_name[name].busy = True
            return self.by_name[name]

    def claim_named(self, name):
        with self._lock:
            host = self.by_name.get(name)
            if host is None or host.busy:
                return None
            host.busy = True
            return host

    def release(self, host):
        with self._lock:
            host.busy = False

    @contextlib.contextmanager
    def forcing(self, name, forced_down):
        """Around a force-down (or up) of ``name``; call with its status.

        ``with hosts.forcing(name, True) as answered: ...
        answered(status)``. A force-up counts as done from the moment it
        is sent; a force-down from its 200, and only when no other force
        request of the host was under way meanwhile (whose write may then
        have come last).
        """
        status = []
        with self._lock:
            host = self.by_name[name]
            host.force_generation += 1
            host.forcing += 1
            sent = host.force_generation
            if not forced_down:
                host.forced_down = False
        try:
            yield status.append
        finally:
            with self._lock:
                host.forcing -= 1
                alone = host.forcing == 0 and host.force_generation == sent
                host.force_generation += 1
                if forced_down and status == [200] and alone:
                    host.forced_down = True

    def fences(self):
        """{host: (forced down, force generation)} now."""
        with self._lock:
            return {name: (host.forced_down, host.force_generation)
                    for name, host in self.by_name.items()}

    def in_state(self, *states):
        with self._lock:
            return [name for name, host in self.by_name.items()
                    if host.state in states]

    # ------------------------------------------------------- placement

    def refresh(self, connection=None):
        """Read where every live server is; install it unless older."""
        with self._lock:
            self._ticket += 1
            ticket = self._ticket
        query = sa.text('SELECT uuid, host FROM instances WHERE deleted = 0')
        if connection is None:
            with self.engine.connect() as connection:
                rows = connection.execute(query).all()
        else:
            rows = connection.execute(query).all()
        with self._lock:
            if ticket > self._installed:
                self._installed = ticket
                self._placement = {row.uuid: row.host for row in rows}

    def placed(self):
        """The uuids of the servers with a host, as last read."""
        with self._lock:
            return {uuid for uuid, host in self._placement.items() if host}

    def pick_server(self, rng, evacuable_share):
        """(uuid, host) to evacuate: mostly one of a fenced host.

        Otherwise (``1 - evacuable_share`` of the picks) one of an up or
        crashed host, which must be refused. Never one of a host being
        fenced or repaired. None if the pool drawn is empty.
        """
        with self._lock:
            states = {name: host.state for name, host in self.by_name.items()}
            fenced = [(uuid, host) for uuid, host in self._placement.items()
                      if states.get(host) == FENCED]
            others = [(uuid, host) for uuid, host in self._placement.items()
                      if states.get(host) in (UP, CRASHED)]
        if rng.random() >= evacuable_share:
            pool = others
        else:
            pool = fenced
        return rng.choice(pool) if pool else None

    def destination(self, rng):
        """A host to name as destination, or None (the scheduler's).

        Any host but one under repair: full ones and down ones too.
        """
        with self._lock:
            names = [name for name, host in self.by_name.items()
                     if host.state != REPAIRING]
        if not names or rng.random() < 0.4:
            return None
        return rng.choice(names)


def new_rng(seed, stream):
    """A random generator of its own for each thread, from the seed."""
    return random.Random('%s/%s' % (seed, stream))
