"""The faults, each an episode that undoes itself.

An injector thread starts an episode every second or two, at random
(from the run's seed): an agent crash (SIGKILL, restart a few seconds
later), a fence (SIGKILL, power off, force down; a repair some seconds
later), the kill of a destination just after an evacuation to it was
accepted, or a cut of the database or of Redis (reset, or black-holed)
for a few seconds. Each episode owns its host until it has undone what
it did; :meth:`Faults.stop` cuts the waits short and waits for every
episode to end, which is the run's final recovery.
"""

import collections
import json
import os
import tempfile
import threading
import time

import sqlalchemy as sa

from tools.fault_injection import hosts as hosts_mod
from tools.fault_injection import proxy
from tools.fault_injection import storm

# Seconds a crashed agent stays dead, and a fenced host stays fenced.
CRASH_SECONDS = (1, 5)
FENCED_SECONDS = (4, 12)
CUT_SECONDS = (2, 5)
# Refused force-ups of a repaired host before its agent is restarted
# once more (an evacuation accepted during its restart was missed), and
# the seconds after which a repair counts as stuck.
REFUSALS_BEFORE_RESTART = 15
REPAIR_LIMIT = 180
# Seconds the injector waits between two episodes.
PAUSE = (0.5, 2.0)
# The weight of each kind of cut (reset, blackhole) of each relay against
# 4 for a fence, 3 for a crash, 2 for a destination kill; and the seconds
# a relay forwards at least between two cuts: a dependency is away about
# a tenth of the time.
CUT_WEIGHT = 0.25
CUT_GAP = 20


class Faults:

    def __init__(self, api, hosts, relays, cuts, checker, violations, seed,
                 max_fenced):
        self.api = api
        self.hosts = hosts
        self.relays = relays
        self.cuts = cuts
        self.checker = checker
        self.violations = violations
        self.seed = seed
        self.max_fenced = max_fenced
        # Agents dead at once by a crash: others stay to rebuild.
        self.max_crashed = max(1, len(hosts.names) // 3)
        self.counts = collections.Counter()
        self._rng = hosts_mod.new_rng(seed, 'faults')
        self._lock = threading.Lock()
        self._stop = threading.Event()
        self._episodes = []
        self._armed = False
        self._thread = None

    def start(self):
        self._thread = threading.Thread(target=self._inject, daemon=True,
                                        name='injector')
        self._thread.start()

    def stop(self):
        """End the injection; wait until every episode has undone itself."""
        self._stop.set()
        if self._thread is not None:
            self._thread.join()
        while True:
            with self._lock:
                running = [t for t in self._episodes if t.is_alive()]
            if not running:
                return
            for thread in running:
                thread.join()

    def _count(self, kind, number=1):
        with self._lock:
            self.counts[kind] += number

    def _spawn(self, name, target, *args):
        thread = threading.Thread(target=self._episode, name=name,
                                  args=(name, target) + args, daemon=True)
        with self._lock:
            self._episodes.append(thread)
        thread.start()

    def _episode(self, name, target, *args):
        try:
            target(*args)
        except Exception as exc:  # noqa: a broken episode is a finding
            self.violations.add('episode-failed', '%s: %s: %s' % (
                name, type(exc).__name__, exc))

    def _sleep(self, bounds):
        self._stop.wait(self._rng.uniform(*bounds))

    # -------------------------------------------------------- injector

    def _inject(self):
        while not self._stop.wait(self._rng.uniform(*PAUSE)):
            choices = self._choices()
            kind = self._rng.choices(list(choices),
                                     weights=list(choices.values()))[0]
            self._start(kind)

    def _choices(self):
        """{fault kind: weight} of those possible now."""
        choices = {'destination-kill': 2}
        if len(self.hosts.in_state(hosts_mod.CRASHED)) < self.max_crashed:
            choices['crash'] = 3
        fenced = self.hosts.in_state(hosts_mod.FENCING, hosts_mod.FENCED,
                                     hosts_mod.REPAIRING)
        if len(fenced) < self.max_fenced:
            choices['fence'] = 4
        for name in self.relays:
            quiet = self.cuts.quiet_for(name)
            if not self.cuts.is_cut(name) and (quiet is None or
                                               quiet > CUT_GAP):
                choices[name + '-reset'] = CUT_WEIGHT
                choices[name + '-blackhole'] = CUT_WEIGHT
        return choices

    def _start(self, kind):
        if kind == 'destination-kill':
            with self._lock:
                self._armed = True
            return
        if kind.endswith(('-reset', '-blackhole')):
            relay, mode = kind.rsplit('-', 1)
            self.cuts.begin(relay)
            self._spawn(kind, self._cut, relay, mode)
            return
        host = self.hosts.claim(self.hosts.in_state(hosts_mod.UP),
                                self._rng)
        if host is None:
            return
        if kind == 'fence':
            # Counted among the fenced before the next choice is made.
            self.hosts.set_state(host.name, hosts_mod.FENCING)
        self._spawn('%s-%s' % (kind, host.name),
                    self._crash if kind == 'crash' else self._fence, host)

    def evacuation_accepted(self, uuid):
        """Kill the server's destination, when a kill is armed."""
        with self._lock:
            if not self._armed or self._stop.is_set():
                return
            self._armed = False
        with self.hosts.engine.connect() as connection:
            name = connection.execute(sa.text(
                'SELECT host FROM instances WHERE uuid = :uuid'),
                {'uuid': uuid}).scalar()
        host = self.hosts.claim_named(name)
        if host is None:
            return
        if self.hosts.states()[name][0] != hosts_mod.UP:
            self.hosts.release(host)
            return
        self._spawn('destination-kill-' + name, self._crash, host,
                    'destination-kill', uuid)

    # -------------------------------------------------------- episodes

    def _cut(self, relay, mode):
        self._count('%s-%s' % (relay, mode))
        try:
            self.relays[relay].cut(
                proxy.RESET if mode == 'reset' else proxy.BLACKHOLE)
            self._sleep(CUT_SECONDS)
        finally:
            self.relays[relay].restore()
            self.cuts.end(relay)
        self.checker.check('after %s %s' % (relay, mode))

    def _crash(self, host, kind='crash', rebuilt=None):
        """Kill the agent, restart it; ``rebuilt``: a server evacuated to it.

        A kill that came before that server's rebuild ended is counted.
        """
        try:
            self._count(kind)
            host.agent.kill()
            self.hosts.set_state(host.name, hosts_mod.CRASHED)
            if rebuilt is not None and self._rebuilding(rebuilt, host.name):
                self._count(kind + '-mid-rebuild')
            self.checker.check('after %s of %s' % (kind, host.name))
            self._sleep(CRASH_SECONDS)
            self._start_agent(host)
            self.hosts.set_state(host.name, hosts_mod.UP)
            self.checker.check('after restart of %s' % host.name)
        finally:
            self.hosts.release(host)

    def _rebuilding(self, uuid, name):
        with self.hosts.engine.connect() as connection:
            status = connection.execute(sa.text(
                "SELECT status FROM migrations WHERE instance_uuid = :uuid "
                "AND dest_compute = :host AND migration_type = 'evacuation' "
                "ORDER BY id DESC LIMIT 1"), {'uuid': uuid, 'host': name}
            ).scalar()
        return status in ('accepted', 'pre-migrating')

    def _start_agent(self, host):
        attempts = host.agent.start_ready()
        if attempts > 1:
            self._count('agent-start-retry', attempts - 1)

    def _fence(self, host):
        try:
            self._count('fence')
            host.agent.kill()
            power_off(host.agent.state_file, host.name)
            self.checker.check('after power-off of %s' % host.name)
            self._force(host.name, True, self._rng.choice(('2.11', '2.53')))
            self.hosts.set_state(host.name, hosts_mod.FENCED)
            self.checker.check('after force-down of %s' % host.name)
            self._sleep(FENCED_SECONDS)
            self._repair(host)
        finally:
            self.hosts.release(host)

    def _repair(self, host):
        """Restart the agent (it cleans up), then force the host up."""
        self._count('repair')
        with self.hosts.gate.exclusive():
            self.hosts.set_state(host.name, hosts_mod.REPAIRING)
            self.hosts.refresh()
        self._start_agent(host)
        self.checker.check('after repair restart of %s' % host.name)
        deadline = time.monotonic() + REPAIR_LIMIT
        refusals = 0
        while True:
            status = self._force(host.name, False,
                                 self._rng.choice(('2.11', '2.53')),
                                 until=deadline)
            if status == 200:
                break
            if time.monotonic() > deadline:
                self.violations.add('repair-stuck', '%s: force-up still '
                                    'refused after %d s' % (host.name,
                                                            REPAIR_LIMIT))
                break
            refusals += 1
            self._count('force-up-refused')
            if refusals % REFUSALS_BEFORE_RESTART == 0:
                self._count('repair-agent-restart')
                host.agent.stop()
                self._start_agent(host)
            time.sleep(1)
        self.hosts.set_state(host.name, hosts_mod.UP)
        self.checker.check('after force-up of %s' % host.name)

    def force_down(self, name, version):
        """Force a fenced host down again (a client forced it up)."""
        with self.hosts.gate.shared():
            if self.hosts.states()[name][0] == hosts_mod.FENCED:
                self._count('force-down-again')
                self._force(name, True, version)

    def _force(self, name, forced_down, version, until=None):
        """Force ``name`` down or up, again while unavailable; the status.

        A 4xx ends it (a refused force-up is retried by the caller).
        """
        until = until or time.monotonic() + REPAIR_LIMIT
        uuid = self.hosts.by_name[name].service_uuid
        path, body = storm.force_down_request(version, name, uuid,
                                              forced_down)
        kind = 'force-down' if forced_down else 'repair-force-up'
        while True:
            with self.hosts.forcing(name, forced_down) as answered:
                answer = self.api.request(kind, 'PUT', path, version, body)
                answered(answer.status)
            if 200 <= answer.status < 500 or time.monotonic() > until:
                break
            time.sleep(0.5)
        if forced_down and answer.status != 200:
            self.violations.add('force-down-failed', '%s %s: %s %s' % (
                name, version, answer.status, answer.body[:200]))
        return answer.status


def power_off(path, host):
    """What the host runs: nothing, written as the fake driver writes it."""
    directory = os.path.dirname(path)
    with tempfile.NamedTemporaryFile('w', dir=directory, delete=False,
                                     prefix='.' + host + '-off') as state:
        json.dump({'host': host, 'guests': {}}, state)
    os.replace(state.name, path)
