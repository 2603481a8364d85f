"""The availability zone a service is shown in, as Nova derives it, and the
zones that a listing of availability zones shows.

A compute service is in the zone of its host's aggregates (several, joined
by commas, if the host was put in more than one), else in
``default_availability_zone``; every other service is in
``internal_service_availability_zone``.

A zone exists for a listing as long as one service is in it: an aggregate's
zone without a service host is not listed, as in Nova. A zone is available
when one of its services is enabled, whether that service is up or not.
"""

import collections

from nova_forcedown.objects import host_zones
from nova_forcedown.objects import service as service_obj

COMPUTE_TOPIC = 'compute'

# One service of a zone's host tree, with its liveness when it was asked.
ZoneService = collections.namedtuple('ZoneService', ('service', 'is_up'))


class AvailabilityZone(collections.namedtuple(
        'AvailabilityZone', ('name', 'available', 'internal', 'hosts'))):
    """A zone of a listing.

    ``hosts`` is ``{host: [ZoneService, ...]}`` of the zone's enabled
    services, hosts and binaries by name, when the zone is available; None
    when it is not. The API binaries are left out: they never heartbeat, so
    their liveness means nothing (they still make their zone available).
    ``internal`` marks ``internal_service_availability_zone``, which the
    summary listing hides.
    """


class ServiceZones:
    """The zone of each service, from one read of the hosts' zones."""

    def __init__(self, conf, zones_by_host):
        self._internal_zone = conf.internal_service_availability_zone
        self._host_zones = host_zones.HostZones(
            zones_by_host, conf.default_availability_zone)

    @classmethod
    def load(cls, context, conf, hosts=None):
        """The zones of every host (one statement), or only of ``hosts``."""
        return cls(conf, host_zones.zones_by_host(
            context, hosts))

    @classmethod
    def of_host(cls, conf, host, zones):
        """Of ``host``'s services; ``zones``: the zones of its aggregates."""
        return cls(conf, host_zones.zones_of_one_host(host, zones))

    def zone(self, service):
        if service.topic == COMPUTE_TOPIC:
            return self._host_zones.of(service.host)
        return self._internal_zone

    def availability_zones(self, services, is_up=None):
        """The zones of ``services``: available ones by name, then the others.

        ``services`` should be every service, API ones included, read
        before; ``is_up(service)``, when given, is the liveness shown in the
        host trees (else None there).
        """
        enabled = collections.defaultdict(list)
        disabled = set()
        for service in services:
            if service.disabled:
                disabled.add(self.zone(service))
            else:
                enabled[self.zone(service)].append(service)
        zones = [self._available(name, enabled[name], is_up)
                 for name in sorted(enabled)]
        zones.extend(AvailabilityZone(name, False,
                                      name == self._internal_zone, None)
                     for name in sorted(disabled - set(enabled)))
        return zones

    def _available(self, name, services, is_up):
        hosts = collections.defaultdict(list)
        for service in sorted(services, key=_by_host_and_binary):
            if service.binary not in service_obj.API_BINARIES:
                hosts[service.host].append(ZoneService(
                    service, is_up(service) if is_up else None))
        return AvailabilityZone(name, True, name == self._internal_zone,
                                dict(hosts))


def _by_host_and_binary(service):
    return service.host, service.binary
