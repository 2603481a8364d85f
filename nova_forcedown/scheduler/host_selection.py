"""Where an evacuated server may go, as Nova's scheduler decides it.

A candidate host runs a nova-compute service that is up, enabled and not
forced down, is not the server's host, is in the server's availability
zone when it asked for one, and has room for the server's flavor: vcpus,
memory and disk against its node's capacity (with Nova's initial
allocation ratios) and what the servers already there take. Candidates
come most free memory first, as Nova's default weigher ranks them. The
claim itself (:func:`claim`) is made in the evacuation's transaction,
with the node's row locked, so two evacuations never overcommit a host.
"""

import collections

from nova_forcedown.db import migrations as db_migrations
from nova_forcedown.objects import aggregate as aggregate_obj
from nova_forcedown.servicegroup import zones as zones_mod

# Nova's initial allocation ratios: CPU may be overcommitted, memory and
# disk not.
CPU_RATIO = 4.0
RAM_RATIO = 1.0
DISK_RATIO = 1.0

Candidate = collections.namedtuple('Candidate', (
    'host', 'node', 'node_id', 'vcpus', 'memory_mb', 'disk_gb'))


def hosts_to_consider(context, conf, server, host=None):
    """The hosts a destination of ``server`` is looked for among.

    ``host`` alone when one was asked for; the hosts of the server's zone
    when it asked for a named one (read from its aggregates); else None,
    meaning every host.
    """
    if host is not None:
        return [host]
    if _in_named_zone(conf, server.availability_zone):
        return aggregate_obj.AggregateList.hosts_in_zone(
            context, server.availability_zone)
    return None


def candidates(context, conf, is_up, server, services, host=None):
    """The hosts of ``services`` that may take ``server`` now.

    Most free memory first. ``services``: the compute services of
    :func:`hosts_to_consider` (others may be among them); ``host``, when
    given, is the only one considered. ``is_up`` is the servicegroup's
    liveness of a service record.
    """
    zone = server.availability_zone
    usable = [service for service in services
              if service.host != server.host and not service.disabled and
              not service.forced_down and is_up(service) and
              (host is None or service.host == host)]
    # The hosts of a named zone were read as such; any other host must
    # show the server's zone.
    if zone and (host is not None or not _in_named_zone(conf, zone)):
        zones = zones_mod.ServiceZones.load(
            context, conf, hosts=[service.host for service in usable])
        usable = [service for service in usable
                  if zones.zone(service) == zone]
    found = []
    for node in db_migrations.nodes_with_usage(
            context, [service.host for service in usable]):
        candidate = capacity_of(node)
        if fits(candidate, node.usage, server):
            found.append((candidate, node.usage))
    found.sort(key=lambda pair: -_free_memory(*pair))
    return [candidate for candidate, _ in found]


def _in_named_zone(conf, zone):
    return bool(zone) and zone != conf.default_availability_zone


def capacity_of(node):
    """A node's capacity as a Candidate, the allocation ratios applied."""
    return Candidate(node.host, node.hypervisor_hostname, node.id,
                     int(node.vcpus * CPU_RATIO),
                     int(node.memory_mb * RAM_RATIO),
                     int(node.local_gb * DISK_RATIO))


def need_of(server):
    """(vcpus, memory_mb, disk_gb) the server takes."""
    return (server.vcpus or 0, server.memory_mb or 0,
            (server.root_gb or 0) + (server.ephemeral_gb or 0))


def fits(candidate, used, server):
    """Whether ``server`` fits on ``candidate`` beside what is ``used``."""
    capacity = (candidate.vcpus, candidate.memory_mb, candidate.disk_gb)
    return all(taken + wanted <= total for taken, wanted, total in
               zip(used, need_of(server), capacity))


def claim(connection, candidate, server):
    """Whether ``server`` still fits on ``candidate``, its node locked.

    Runs in the evacuation's transaction: the node's row stays locked
    until it commits, so the next claim on it sees this server there.
    """
    db_migrations.lock_node(connection, candidate.node_id)
    return fits(candidate, db_migrations.host_usage(connection,
                                                    candidate.host), server)


def _free_memory(candidate, used):
    return candidate.memory_mb - used[1]
