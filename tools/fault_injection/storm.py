"""The clients: evacuation storms, force-up attempts and listings.

Each client thread loops until told to stop, with a random generator of
its own (from the run's seed): evacuations at random microversions with
random destinations (the scheduler's, a full host, a down one, the
source), mostly of the servers of fenced hosts and sometimes of hosts
that are not fenced (which must be refused); force-up attempts; and the
listings an operator watches during a recovery.
"""

import threading

import sqlalchemy as sa

from tools.fault_injection import client as api_client
from tools.fault_injection import hosts as hosts_mod

# How often a client evacuates, forces a host up, or lists.
EVACUATE, FORCE_UP, LIST = 0.6, 0.04, 0.36
# Share of the evacuations aimed at the servers of fenced hosts.
EVACUABLE_SHARE = 0.85
VERSIONS = ('2.1', '2.14', '2.29', '2.53', '2.68', '2.95')
LISTINGS = (
    ('services', '/os-services', ('2.1', '2.11', '2.53')),
    ('hypervisors', '/os-hypervisors/detail', ('2.1', '2.53', '2.88')),
    ('migrations', '/os-migrations', ('2.1', '2.23', '2.59', '2.80')),
    ('servers', '/servers/detail?all_tenants=1', ('2.1', '2.47', '2.96')),
)


def evacuate_body(version, host, rng):
    """The evacuate action of ``version`` to ``host`` (None: any)."""
    body = {}
    if host is not None:
        body['host'] = host
    if version == '2.1':
        body['onSharedStorage'] = rng.random() < 0.5
    elif version == '2.29' and host is not None and rng.random() < 0.7:
        body['force'] = rng.random() < 0.5
    return {'evacuate': body}


def force_down_request(version, host, uuid, forced_down):
    """(path, body) of a force-down or force-up at 2.11 or 2.53."""
    if version == '2.11':
        return '/os-services/force-down', {
            'host': host, 'binary': 'nova-compute',
            'forced_down': forced_down}
    return '/os-services/' + uuid, {'forced_down': forced_down}


class Storm:
    """``count`` client threads against ``api``."""

    def __init__(self, api, hosts, faults, violations, seed, count):
        self.api = api
        self.hosts = hosts
        self.faults = faults
        self.violations = violations
        self.seed = seed
        self.count = count
        self.accepted = {}
        self.forced_up_while_fenced = 0
        self._lock = threading.Lock()
        self._stop = threading.Event()
        self._threads = []

    def start(self):
        for index in range(self.count):
            thread = threading.Thread(target=self._loop, args=(index,),
                                      name='client-%d' % index, daemon=True)
            thread.start()
            self._threads.append(thread)

    def stop(self):
        self._stop.set()
        for thread in self._threads:
            thread.join(self.api.timeout + 10)

    def _loop(self, index):
        rng = hosts_mod.new_rng(self.seed, 'client-%d' % index)
        while not self._stop.is_set():
            draw = rng.random()
            if draw < EVACUATE:
                self._evacuate(rng)
            elif draw < EVACUATE + FORCE_UP:
                self._force_up(rng)
            else:
                self._list(rng)
            self._stop.wait(rng.uniform(0, 0.05))

    def _evacuate(self, rng):
        with self.hosts.gate.shared():
            picked = self.hosts.pick_server(rng, EVACUABLE_SHARE)
            if picked is None:
                self._list(rng)
                return
            uuid, source = picked
            version = rng.choice(VERSIONS)
            target = self.hosts.destination(rng)
            before = self.hosts.states()
            answer = self.api.request(
                'evacuate', 'POST', '/servers/%s/action' % uuid, version,
                evacuate_body(version, target, rng))
        if answer.status != 200:
            return
        with self._lock:
            self.accepted[version] = self.accepted.get(version, 0) + 1
        self._check_source_was_down(uuid, before)
        self.faults.evacuation_accepted(uuid)

    def _check_source_was_down(self, uuid, before):
        """An accepted evacuation left a host that was fenced."""
        with self.hosts.engine.connect() as connection:
            row = connection.execute(sa.text(
                "SELECT source_compute, dest_compute, status FROM migrations "
                "WHERE instance_uuid = :uuid AND migration_type = "
                "'evacuation' ORDER BY id DESC LIMIT 1"), {'uuid': uuid}
            ).first()
        if row is None:
            self.violations.add('evacuation-without-migration', uuid)
            return
        after = self.hosts.states()
        state, generation = before.get(row.source_compute, (None, None))
        if (state in (hosts_mod.UP, hosts_mod.CRASHED) and
                after.get(row.source_compute) == (state, generation)):
            self.violations.add(
                'evacuated-unfenced-host', 'server %s evacuated from %s '
                '(%s, not fenced) to %s, migration %s' % (
                    uuid, row.source_compute, state, row.dest_compute,
                    row.status))

    def _force_up(self, rng):
        names = self.hosts.in_state(hosts_mod.FENCED, hosts_mod.REPAIRING,
                                    hosts_mod.UP)
        if not names:
            return
        name = rng.choice(names)
        host = self.hosts.by_name[name]
        version = rng.choice(('2.11', '2.53'))
        path, body = force_down_request(version, name, host.service_uuid,
                                        False)
        state = self.hosts.states()[name]
        answer = self.api.request('force-up', 'PUT', path, version, body)
        if answer.status == 200 and state[0] == hosts_mod.FENCED and (
                self.hosts.states()[name] == state):
            # Nothing left it that could be running elsewhere: allowed.
            # Fence it again, as the fencing controller would.
            with self._lock:
                self.forced_up_while_fenced += 1
            self.faults.force_down(name, version)

    def _list(self, rng):
        kind, path, versions = rng.choice(LISTINGS)
        version = rng.choice(versions)
        if kind == 'migrations' and version in ('2.59', '2.80'):
            path += '?limit=50'
        answer = self.api.request('list-' + kind, 'GET', path, version)
        if answer.status == 200 and api_client.json_of(answer) is None:
            self.violations.add('listing-not-json', '%s %s' % (path,
                                                               version))
