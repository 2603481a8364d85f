"""What must hold at every moment, and after the final recovery.

Read from the database directly (never through a relay) and from the
fake driver's state files, ``<state-dir>/<host>.json``, which the driver
replaces whole at each change:

- no server runs on two hosts (a uuid among the guests of two files, in
  one consistent read of all of them);
- none is lost: as many live server rows as at the start, each with a
  host;
- no host holds more than its node's capacity (the live servers' vcpus,
  memory and disk against the node's, with the scheduler's ratios);

and once every agent is up and every fenced host repaired: every
evacuation ended (completed, error or failed), no server left
rebuilding, no host running a copy of a server placed elsewhere, and
every server's power state the one its host reports (the agents sync
them every second here), NOSTATE for one its host does not run.
"""

import collections
import json
import os
import threading

import sqlalchemy as sa

from nova_forcedown.objects import compute_node as compute_node_obj
from nova_forcedown.objects import instance_operations as operations

FINAL_STATUSES = ('completed', 'error', 'failed')

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


class Checker:
    """The invariants, checked on demand and every ``interval`` seconds."""

    def __init__(self, engine, state_dir, hosts, violations, interval):
        self.engine = engine
        self.state_dir = state_dir
        self.hosts = hosts
        self.violations = violations
        self.interval = interval
        self.servers = None
        self.checks = 0
        self._lock = threading.Lock()
        self._stop = threading.Event()
        self._thread = None

    def baseline(self):
        with self.engine.connect() as connection:
            self.servers = connection.execute(sa.text(
                'SELECT count(*) FROM instances WHERE deleted = 0')).scalar()
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
        rows = connection.execute(sa.text(
            'SELECT count(*) AS live, count(host) AS placed FROM instances '
            'WHERE deleted = 0')).first()
        if rows.live != self.servers:
            self.violations.add('server-lost', '%d live servers, %d at the '
                                'start (%s)' % (rows.live, self.servers,
                                                when), key=rows.live)
        if rows.placed != rows.live:
            self.violations.add('server-without-host', '%d of %d have no '
                                'host (%s)' % (rows.live - rows.placed,
                                               rows.live, when),
                                key=rows.placed)
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
        for row in open_rows:
            self.violations.add('migration-not-final', '%s %s -> %s: %s' % (
                row.instance_uuid, row.source_compute, row.dest_compute,
                row.status))
        running = {uuid: host for host, running in guests.items()
                   for uuid in running}
        for server in servers:
            if server.task_state == 'rebuilding':
                self.violations.add('server-still-rebuilding', '%s on %s' % (
                    server.uuid, server.host))
            if server.uuid in running and running[server.uuid] != server.host:
                self.violations.add('stray-copy', '%s runs on %s, placed on '
                                    '%s' % (server.uuid, running[server.uuid],
                                            server.host))
            _check_power_state(self.violations, server, guests)
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
                               if server.uuid not in running],
            'servers_by_vm_state': dict(collections.Counter(
                server.vm_state for server in servers)),
        }


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
