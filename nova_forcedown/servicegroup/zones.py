"""The availability zone a service is shown in, as Nova derives it.

A compute service is in the zone of its host's aggregates (several, joined
by commas, if the host was put in more than one), else in
``default_availability_zone``; every other service is in
``internal_service_availability_zone``.
"""

from nova_forcedown.objects import aggregate as aggregate_obj

COMPUTE_TOPIC = 'compute'


class ServiceZones:
    """The zone of each service, from one read of the hosts' zones."""

    def __init__(self, conf, zones_by_host):
        self._default_zone = conf.default_availability_zone
        self._internal_zone = conf.internal_service_availability_zone
        self._zones_by_host = zones_by_host

    @classmethod
    def load(cls, context, conf, hosts=None):
        """The zones of every host (one statement), or only of ``hosts``."""
        return cls(conf, aggregate_obj.AggregateList.zones_by_host(
            context, hosts))

    def zone(self, service):
        if service.topic == COMPUTE_TOPIC:
            return self._zones_by_host.get(service.host) or self._default_zone
        return self._internal_zone
