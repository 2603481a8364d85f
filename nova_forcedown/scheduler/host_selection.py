"""Where an evacuated server may go, as Nova's scheduler decides it.

A candidate host runs a nova-compute service that is up, enabled and not
forced down, is not the server's host, is in the server's availability
zone when it asked for one, and has room for the server's flavor: vcpus,
memory and disk against its node's capacity (with Nova's initial
allocation ratios, :mod:`nova_forcedown.objects.compute_node`) and what
the servers already there take. Candidates come most free memory first,
as Nova's default weigher ranks them.

All of it is read before the evacuation's transaction, which then claims
the first candidate that still fits (:func:`.compute_node.claim`), with
the node's row locked, so two evacuations never overcommit a host.
"""

import collections

from nova_forcedown import exception
from nova_forcedown.objects import host_zones
from nova_forcedown.objects import compute_node as compute_node_obj
from nova_forcedown.objects import instance_operations as operations
from nova_forcedown.objects import migration as migration_obj

# What an evacuation needs to know before its transaction: whether the
# server's host is up (an evacuation is then refused), and the
# Capacities of the nodes to try, in order.
# ``retry_source_up``: for a server whose evacuation is retried, whether
# the source of that first evacuation is up (None otherwise).
Plan = collections.namedtuple('Plan', ('source_up', 'choices',
                                       'retry_source_up'),
                              defaults=(None,))


def evacuation_plan(context, conf, servicegroup, server, host=None,
                    force=False):
    """The :class:`Plan` of evacuating ``server`` (to ``host``, if given).

    ``force`` (a host given at 2.1-2.28, or with force at 2.29-2.67):
    that host's node alone, unfiltered; its capacity is still claimed.
    ``servicegroup``: the servicegroup API that says which services are
    up. A ``host`` that runs no compute service is
    ComputeHostNotFoundForEvacuation. The services and nodes are read in
    one query (:func:`.compute_node.compute_hosts`).
    """
    hosts = hosts_to_consider(context, conf, server, host)
    first_sources = (
        migration_obj.open_evacuation_sources(context, server.uuid)
        if server.task_state == operations.REBUILDING else [])
    found = compute_node_obj.compute_hosts(
        context, None if hosts is None else
        hosts + [server.host] + first_sources)
    if host is not None and not _of_host(found.services, host):
        raise exception.ComputeHostNotFoundForEvacuation(host=host)
    up = servicegroup.up_of(found.services)
    source_up = bool(_of_host(up, server.host))
    retry_source_up = (any(_of_host(up, source) for source in first_sources)
                       if first_sources else None)
    if host is not None and force:
        choices = [node.capacity for node in found.nodes.get(host, ())][:1]
    else:
        choices = candidates(context, conf, server, up, found.nodes,
                             host=host)
    return Plan(source_up, choices, retry_source_up)


# What the scheduler reads of a create request: the size of each server
# and the zone asked for (None: any); ``host`` is None, as no server is
# anywhere yet.
BuildRequest = collections.namedtuple('BuildRequest', (
    'host', 'availability_zone', 'vcpus', 'memory_mb', 'root_gb',
    'ephemeral_gb'))


def host_is_up(context, servicegroup, host):
    """Whether ``host``'s compute service is up (forced down: not)."""
    found = compute_node_obj.compute_hosts(context, [host])
    return bool(_of_host(servicegroup.up_of(found.services), host))


def build_choices(context, conf, servicegroup, request, host=None,
                  node=None):
    """The NodeUsages a new server of ``request`` may go to, in order.

    ``request`` has the server's size (vcpus, memory_mb, root_gb,
    ephemeral_gb) and the zone it asked for (``availability_zone``), and
    no ``host``. ``host`` and ``node``: where an admin asked it to go;
    they are filtered as any other (up, enabled, not forced down, zone,
    room). A ``host`` that runs no compute service, or a ``node`` that is
    no node of the hosts considered, is ComputeHostNotFound, as Nova
    names either.
    """
    hosts = hosts_to_consider(context, conf, request, host)
    found = compute_node_obj.compute_hosts(context, hosts)
    if host is not None and not _of_host(found.services, host):
        raise exception.ComputeHostNotFound(host=host)
    if node is not None and not any(
            usage.capacity.node == node
            for usages in found.nodes.values() for usage in usages):
        raise exception.ComputeHostNotFound(host=node)
    up = servicegroup.up_of(found.services)
    chosen = set(candidates(context, conf, request, up, found.nodes,
                            host=host))
    return [usage for usages in found.nodes.values() for usage in usages
            if usage.capacity in chosen and
            (node is None or usage.capacity.node == node)]


def reserved_host_plan(context, servicegroup, server, host):
    """The forced :class:`Plan` to reserved ``host``; None unless it may.

    A reserved host is disabled until used, so it is named with force (the
    filters skipped, as Masakari in effect skips them by enabling it): it
    must then be up, not the server's host, and have a node with room,
    read with the source's liveness in one query.
    """
    if host == server.host:
        return None
    found = compute_node_obj.compute_hosts(context, [host, server.host])
    up = servicegroup.up_of(found.services)
    nodes = found.nodes.get(host, ())
    if not _of_host(up, host) or not any(
            compute_node_obj.fits(node.capacity, node.used, server)
            for node in nodes):
        return None
    return Plan(bool(_of_host(up, server.host)), [nodes[0].capacity])


def _of_host(services, host):
    return [service for service in services if service.host == host]


def hosts_to_consider(context, conf, server, host=None):
    """The hosts a destination of ``server`` is looked for among.

    ``host`` alone when one was asked for; the hosts of the server's zone
    when it asked for a named one (read from its aggregates); else None,
    meaning every host.
    """
    if host is not None:
        return [host]
    if _in_named_zone(conf, server.availability_zone):
        return host_zones.hosts_in_zone(
            context, server.availability_zone)
    return None


def candidates(context, conf, server, up, nodes, host=None):
    """The Capacities of the nodes of ``up``'s hosts that may take ``server``.

    Most free memory first. ``up``: the compute services of
    :func:`hosts_to_consider` that are up (others may be among them);
    ``nodes``: their hosts' NodeUsage, by host; ``host``, when given, is
    the only one considered.
    """
    zone = server.availability_zone
    usable = [service for service in up
              if service.host != server.host and not service.disabled and
              (host is None or service.host == host)]
    # The hosts of a named zone were read as such; any other host must
    # show the server's zone.
    if zone and (host is not None or not _in_named_zone(conf, zone)):
        zones = host_zones.HostZones.load(
            context, conf, hosts=[service.host for service in usable])
        usable = [service for service in usable
                  if zones.of(service.host) == zone]
    found = [node for service in usable
             for node in nodes.get(service.host, ())
             if compute_node_obj.fits(node.capacity, node.used, server)]
    found.sort(key=lambda node: (node.used[1] - node.capacity.memory_mb,
                                 node.capacity.node_id))
    return [node.capacity for node in found]


def _in_named_zone(conf, zone):
    return bool(zone) and zone != conf.default_availability_zone
