"""The clients: evacuation storms, creates, deletes, force-up attempts
and listings.

Each client thread loops until told to stop, with a random generator of
its own (from the run's seed): evacuations at random microversions with
random destinations (the scheduler's, a full host, a down one, the
source), mostly of the servers of fenced hosts and sometimes of hosts
that are not fenced (which must be refused); creates of servers, some
naming a host (any, fenced ones too) as an admin may at 2.74; deletes of
the servers created, mostly of those placed; force-up attempts; and the
listings an operator watches during a recovery.

A create answered 202 whose server is on a host that was forced down
all along the request (as :meth:`.hosts.Hosts.forcing` knows it) is a
violation: nothing may place a server on a fenced host.
"""

import threading

import sqlalchemy as sa

from tools.fault_injection import client as api_client
from tools.fault_injection import hosts as hosts_mod

# How often a client evacuates, creates a server, deletes one, forces a
# host up, or lists.
EVACUATE, CREATE, DELETE, FORCE_UP = 0.55, 0.05, 0.05, 0.04
LIST = 1 - EVACUATE - CREATE - DELETE - FORCE_UP
# Share of the creates that name a host (2.74, as an admin), and of the
# deletes aimed at a created server with a host (the others at any
# created one, most of them never placed, the hosts being full).
PINNED_SHARE = 0.2
DELETE_PLACED_SHARE = 0.8
CREATE_VERSIONS = ('2.1', '2.37', '2.47', '2.74', '2.96')
DELETE_VERSIONS = ('2.1', '2.53', '2.96')
# Any UUID is an image: there is no image service here.
IMAGE = '6a3e9d52-7c1f-4b8e-9f2d-0e5b4c3a2d10'
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


def create_body(version, flavor, host, name, rng):
    """The create of one server of ``flavor`` at ``version``, on ``host``.

    ``host`` (None: the scheduler's) only from 2.74.
    """
    server = {'name': name, 'imageRef': IMAGE, 'flavorRef': flavor}
    if version != '2.1':
        # Required from 2.37; the fake driver gives 'auto' an address.
        server['networks'] = rng.choice(('none', 'auto'))
    if host is not None:
        server['host'] = host
    return {'server': server}


def force_down_request(version, host, uuid, forced_down):
    """(path, body) of a force-down or force-up at 2.11 or 2.53."""
    if version == '2.11':
        return '/os-services/force-down', {
            'host': host, 'binary': 'nova-compute',
            'forced_down': forced_down}
    return '/os-services/' + uuid, {'forced_down': forced_down}


class Storm:
    """``count`` client threads against ``api``."""

    def __init__(self, api, hosts, faults, violations, seed, count,
                 ledger, flavors):
        self.api = api
        self.hosts = hosts
        self.faults = faults
        self.violations = violations
        self.seed = seed
        self.count = count
        self.ledger = ledger
        self.flavors = flavors
        self.accepted = {}
        self.forced_up_while_fenced = 0
        # Creates answered 202 by where their server went (a host's state
        # then, or 'unplaced'), and those judged: made while their host
        # was forced down all along, had one been chosen.
        self.created = {}
        self.creates_judged = 0
        self.deleted = {}
        self._names = 0
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
            elif draw < EVACUATE + CREATE:
                self._create(rng)
            elif draw < EVACUATE + CREATE + DELETE:
                self._delete(rng)
            elif draw < EVACUATE + CREATE + DELETE + FORCE_UP:
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

    def _create(self, rng):
        host = (rng.choice(self.hosts.names)
                if rng.random() < PINNED_SHARE else None)
        version = '2.74' if host else rng.choice(CREATE_VERSIONS)
        with self._lock:
            self._names += 1
            name = 'fi-created-%d' % self._names
        before = self.hosts.fences()
        answer = self.api.request(
            'create', 'POST', '/servers', version,
            create_body(version, rng.choice(self.flavors), host, name, rng))
        if answer.status != 202:
            return
        after = self.hosts.fences()
        uuid = api_client.json_of(answer)['server']['id']
        self.ledger.add_created(uuid)
        # Forced down all along the request: no server may go there.
        fenced = {forced for forced, fence in before.items()
                  if fence[0] and after[forced] == fence}
        placed = self._placed_on(uuid)
        with self._lock:
            if fenced:
                self.creates_judged += 1
            where = ('unplaced' if placed is None else
                     self.hosts.states()[placed][0])
            self.created[where] = self.created.get(where, 0) + 1
        if placed in fenced:
            self.violations.add(
                'created-on-forced-down-host', 'server %s (%s%s) placed on '
                '%s, forced down all along its create' % (
                    uuid, version, ', named' if host else '', placed))

    def _placed_on(self, uuid):
        """The host the create placed ``uuid`` on (None: none took it).

        Its host now, or the source of its first evacuation if one
        moved it since.
        """
        with self.hosts.engine.connect() as connection:
            source = connection.execute(sa.text(
                "SELECT source_compute FROM migrations WHERE "
                "instance_uuid = :uuid AND migration_type = 'evacuation' "
                "ORDER BY id LIMIT 1"), {'uuid': uuid}).scalar()
            if source is not None:
                return source
            return connection.execute(sa.text(
                'SELECT host FROM instances WHERE uuid = :uuid'),
                {'uuid': uuid}).scalar()

    def _delete(self, rng):
        uuid = self.ledger.take_deletable(rng, self.hosts.placed(),
                                          DELETE_PLACED_SHARE)
        if uuid is None:
            self._list(rng)
            return
        answer = self.api.request('delete', 'DELETE', '/servers/' + uuid,
                                  rng.choice(DELETE_VERSIONS))
        self.ledger.delete_answered(uuid, answer.status)
        if answer.status:
            with self._lock:
                self.deleted[answer.status] = self.deleted.get(
                    answer.status, 0) + 1

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
        with self.hosts.forcing(name, False) as answered:
            answer = self.api.request('force-up', 'PUT', path, version,
                                      body)
            answered(answer.status)
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
