"""Which hosts may have failed, and which zones may not be fenced now.

A host is watched while its nova-compute service is enabled and not
forced down: a disabled host is in an operator's hands (maintenance), a
forced-down one already fenced. A watched host whose service is down is a
suspect, for :mod:`.confirmation` to judge.

A monitor that sees a large part of a zone fail at once is more likely
cut off from it (a partition, a switch, its own network) than looking at
that many dead hosts: a zone whose suspects would take it over the limit
has none of them fenced, and the monitor says so.
"""

import collections

Refusal = collections.namedtuple('Refusal', (
    'zone', 'suspects', 'forced_down', 'hosts', 'limit'))


def watched(services):
    """The records of ``services`` (compute) whose hosts are watched."""
    return [service for service in services
            if not service.disabled and not service.forced_down]


def suspects(services, is_up):
    """Hosts of the watched ``services`` (compute records) that are down."""
    return sorted(service.host for service in watched(services)
                  if not is_up(service))


def refused_zones(services, suspected, zone_of, limit):
    """A :class:`Refusal` per zone whose suspects would pass ``limit``.

    ``limit``: the largest fraction of a zone's compute hosts that may be
    forced down at once, those already forced down counted.
    """
    hosts = collections.defaultdict(set)
    forced_down = collections.defaultdict(set)
    for service in services:
        zone = zone_of(service.host)
        hosts[zone].add(service.host)
        if service.forced_down:
            forced_down[zone].add(service.host)
    by_zone = collections.defaultdict(list)
    for host in suspected:
        by_zone[zone_of(host)].append(host)
    return [Refusal(zone, names, len(forced_down[zone]), len(hosts[zone]),
                    limit)
            for zone, names in sorted(by_zone.items())
            if (len(forced_down[zone]) + len(names)) > limit * len(
                hosts[zone])]
