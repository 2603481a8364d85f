"""What must hold at every moment, and after the final recovery.

Read from the database directly (never through a relay) and from the
fake driver's state files, ``<state-dir>/<host>.json``, which the driver
replaces whole at each change:

- no server runs on two hosts (a uuid among the guests of two files, in
  one consistent read of all of them);
- none is lost: every server of the start, and every one whose create
  was answered 202, is live unless a delete of it was sent
  (:class:`Ledger`); each of the start has a host, and so has every
  created one but those in error (no host took it);
- no host holds more than its node's capacity (the live servers' vcpus,
  memory and disk against the node's, with the scheduler's ratios);

and once every agent is up and every fenced host repaired: every
evacuation ended (completed, error or failed), no server left building,
rebuilding or deleting, every server active (or stopped, which an
evacuation keeps so) or in error with a fault, every server whose delete
was answered 204 gone from the database and from every host, no host
running a copy of a server placed elsewhere, and every server's power
state the one its host reports (the agents sync them every second here),
NOSTATE for one its host does not run.
"""

import collections
import json
import os
import threading

import sqlalchemy as sa

from nova_forcedown.objects import compute_node as compute_node_obj
from nova_forcedown.objects import instance_operations as operations

FINAL_STATUSES = ('completed', 'error', 'failed')
# Where every server ends: an evacuation keeps a stopped server stopped,
# as Nova's does.
FINISHED = (operations.ACTIVE, operations.STOPPED, operations.ERROR)

_USAGE = sa.text(
    'SELECT n.id, n.host, n.hypervisor_hostname, n.vcpus, n.memory_mb, '
    'n.local_gb, '
    'COALESCE(SUM(i.vcpus), 0) AS used_vcpus, '
    'COALESCE(SUM(i.memory_mb), 0) AS used_memory_mb, '
    'COALESCE(SUM(COALESCE(i.root_gb, 0) + COALESCE(i.ephemeral_gb, 0)), 0)'
    ' AS used_gb, COUNT(i.id) AS servers '
    'FROM compute_nodes n LEFT JOIN instances i '
    'ON i.host = n.host AND i.deleted = 0 WHERE n.deleted = 0 '
    'GROUP BY n.id, n.host, n.hypervisor_hostname, n.vcpus, n.memory_mb, '
    'n.local_gb')


class Ledger:
    """The servers that must be live, as the clients' answers say.

    Those of the start and those whose create was answered 202, less
    those a delete was sent for (from the moment it is sent: it may then
    be carried out at any time). A delete refused with a 4xx gives its
    server back; one answered 204 must be carried out by the end.
    """

    def __init__(self):
        self._lock = threading.Lock()
        self.original = set()
        self.created = set()
        self._going = set()
        self.deleted = set()

    def start(self, uuids):
        with self._lock:
            self.original.update(uuids)

    def add_created(self, uuid):
        with self._lock:
            self.created.add(uuid)

    def take_deletable(self, rng, placed, placed_share):
        """A created server no delete was sent for, marked as going.

        One of ``placed`` (the uuids with a host), ``placed_share`` of
        the times when there is one, so that deletes make room; None when
        there is none at all. Never a server of the start: the fake
        driver's agent makes those of its host again when it restarts
        and finds them gone.
        """
        with self._lock:
            kept = self.created - self._going
            pool = sorted(kept & placed)
            if not pool or rng.random() >= placed_share:
                pool = sorted(kept)
            if not pool:
                return None
            uuid = rng.choice(pool)
            self._going.add(uuid)
            return uuid

    def delete_answered(self, uuid, status):
        with self._lock:
            if status == 204:
                self.deleted.add(uuid)
            elif 400 <= status < 500:
                self._going.discard(uuid)

    def expected(self):
        """The servers that must be live now."""
        with self._lock:
            return (self.original | self.created) - self._going

    def going(self):
        with self._lock:
            return set(self._going)


class Checker:
    """The invariants, checked on demand and every ``interval`` seconds."""

    def __init__(self, engine, state_dir, hosts, violations, interval,
                 ledger=None):
        self.engine = engine
        self.state_dir = state_dir
        self.hosts = hosts
        self.violations = violations
        self.interval = interval
        self.ledger = ledger or Ledger()
        self.servers = None
        self.checks = 0
        self._lock = threading.Lock()
        self._stop = threading.Event()
        self._thread = None

    def baseline(self):
        with self.engine.connect() as connection:
            uuids = connection.execute(sa.text(
                'SELECT uuid FROM instances WHERE deleted = 0')).scalars()
            self.ledger.start(uuids)
        self.servers = len(self.ledger.original)
        return self.servers

    def start(self):
        self._thread = threading.Thread(target=self._sample, daemon=True,
                                        name='sampler')
        self._thread.start()

    def stop(self):
        self._stop.set()
        if self._thread is not None:
            self._thread.join()

    def _sample(self):
        while not self._stop.wait(self.interval):
            self.check('sample')

    def check(self, when):
        """Check every moment's invariant now; ``when`` labels findings."""
        with self._lock:
            self.checks += 1
            guests = self.guests()
            with self.engine.connect() as connection:
                self.hosts.refresh(connection)
                self._check_database(connection, when)
            self._check_two_hosts(guests, when)

    def guests(self):
        """{host: {uuid: power_state}}, all files as they were at once.

        Each file is replaced, never rewritten, so a file whose inode (and
        time and size) is unchanged after all were read still held what
        was read: the read is retried until no file changed meanwhile.
        """
        for _ in range(20):
            seen = {}
            for name in sorted(os.listdir(self.state_dir)):
                if name.startswith('.') or not name.endswith('.json'):
                    continue
                path = os.path.join(self.state_dir, name)
                try:
                    with open(path) as state:
                        seen[path] = (_signature(os.fstat(state.fileno())),
                                      json.load(state))
                except FileNotFoundError:
                    continue
            if all(_stat_signature(path) == signature
                   for path, (signature, _) in seen.items()):
                return {data['host']: data['guests']
                        for _, data in seen.values()}
        raise RuntimeError('the state files never held still')

    def _check_two_hosts(self, guests, when):
        where = collections.defaultdict(list)
        for host, running in guests.items():
            for uuid in running:
                where[uuid].append(host)
        for uuid, hosts in where.items():
            if len(hosts) > 1:
                self.violations.add(
                    'server-on-two-hosts', 'server %s runs on %s (%s)' % (
                        uuid, ', '.join(sorted(hosts)), when),
                    key=(uuid, tuple(sorted(hosts))))

    def _check_database(self, connection, when):
        expected = self.ledger.expected()
        live = {row.uuid: row for row in connection.execute(sa.text(
            'SELECT uuid, host, vm_state FROM instances WHERE deleted = 0'))}
        # A delete sent after ``expected`` was read is in ``going`` now.
        lost = expected - set(live) - self.ledger.going()
        for uuid in sorted(lost):
            self.violations.add('server-lost', '%s is not live (%s)' % (
                uuid, when), key=uuid)
        # A created server in error may have none: no host took it.
        unplaced = [row.uuid for row in live.values() if row.host is None and
                    (row.uuid in self.ledger.original or
                     row.vm_state != operations.ERROR)]
        if unplaced:
            self.violations.add('server-without-host', '%d of %d have no '
                                'host, e.g. %s (%s)' % (
                                    len(unplaced), len(live), unplaced[0],
                                    when), key=tuple(sorted(unplaced)))
        for node in connection.execute(_USAGE):
            capacity = compute_node_obj.capacity_of(node)
            used = (node.used_vcpus, node.used_memory_mb, node.used_gb)
            limits = (capacity.vcpus, capacity.memory_mb, capacity.disk_gb)
            if any(have > limit for have, limit in zip(used, limits)):
                self.violations.add(
                    'over-capacity', '%s holds %d servers: vcpus/memory/disk '
                    '%s over %s (%s)' % (node.host, node.servers, used,
                                         limits, when),
                    key=(node.host, node.servers))

    def final(self):
        """The invariants of the end; the figures they read."""
        self.check('final')
        guests = self.guests()
        with self.engine.connect() as connection:
            statuses = dict(connection.execute(sa.text(
                "SELECT status, count(*) FROM migrations WHERE "
                "migration_type = 'evacuation' AND deleted = 0 "
                "GROUP BY status")).all())
            open_rows = connection.execute(sa.text(
                "SELECT instance_uuid, source_compute, dest_compute, status "
                "FROM migrations WHERE migration_type = 'evacuation' AND "
                "deleted = 0 AND status NOT IN ('completed', 'error', "
                "'failed') ORDER BY id")).all()
            servers = connection.execute(sa.text(
                'SELECT uuid, host, vm_state, task_state, power_state '
                'FROM instances WHERE deleted = 0')).all()
            faulted = set(connection.execute(sa.text(
                'SELECT DISTINCT instance_uuid FROM instance_faults '
                'WHERE deleted = 0')).scalars())
        for row in open_rows:
            self.violations.add('migration-not-final', '%s %s -> %s: %s' % (
                row.instance_uuid, row.source_compute, row.dest_compute,
                row.status))
        running = {uuid: host for host, running in guests.items()
                   for uuid in running}
        for server in servers:
            if server.task_state is not None:
                self.violations.add('server-still-%s' % server.task_state,
                                    '%s on %s' % (server.uuid, server.host))
            if server.vm_state not in FINISHED:
                self.violations.add('server-not-finished', '%s on %s: %s' % (
                    server.uuid, server.host, server.vm_state))
            elif (server.vm_state == operations.ERROR and
                    server.uuid not in faulted):
                self.violations.add('server-error-without-fault', '%s on %s'
                                    % (server.uuid, server.host))
            if server.uuid in running and running[server.uuid] != server.host:
                self.violations.add('stray-copy', '%s runs on %s, placed on '
                                    '%s' % (server.uuid, running[server.uuid],
                                            server.host))
            _check_power_state(self.violations, server, guests)
        self._check_deleted(servers, running)
        return {
            'migrations': statuses,
            'servers': len(servers),
            'servers_running': sum(1 for server in servers
                                   if running.get(server.uuid) == server.host),
            # Expected of a server in error (its rebuild failed) and of one
            # no client evacuated while its host was fenced: a fence empties
            # the host, and the repaired host does not recreate it.
            'servers_absent': ['%s %s on %s' % (server.uuid, server.vm_state,
                                                server.host)
                               for server in servers
                               if server.host is not None and
                               server.uuid not in running],
            # Created, and in error with "No valid host": never placed.
            'servers_unplaced': sum(1 for server in servers
                                    if server.host is None),
            'servers_by_vm_state': dict(collections.Counter(
                server.vm_state for server in servers)),
            # The servers of the start still live (none is deleted).
            'servers_of_the_start': len(self.ledger.original & {
                server.uuid for server in servers}),
            'servers_created': len(self.ledger.created),
            'servers_deleted': len(self.ledger.deleted),
        }

    def _check_deleted(self, servers, running):
        """Every server whose delete was answered 204 is gone, everywhere."""
        live = {server.uuid for server in servers}
        for uuid in sorted(self.ledger.deleted):
            if uuid in live:
                self.violations.add('deleted-server-live', uuid)
            if uuid in running:
                self.violations.add('deleted-server-running', '%s on %s' % (
                    uuid, running[uuid]))


def _check_power_state(violations, server, guests):
    """The power state its host reports, for a server with no task."""
    on_host = guests.get(server.host, {})
    reported = on_host.get(server.uuid, operations.NOSTATE)
    if server.task_state is None and server.power_state != reported:
        violations.add('power-state-out-of-step', '%s on %s: %s in the '
                       'database, %s on the host' % (
                           server.uuid, server.host, server.power_state,
                           reported))


def _signature(stat):
    return stat.st_ino, stat.st_mtime_ns, stat.st_size


def _stat_signature(path):
    try:
        return _signature(os.stat(path))
    except FileNotFoundError:
        return None
