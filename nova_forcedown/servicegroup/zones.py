"""The availability zone a service is shown in.

A compute service is in the zone its agent registered (else
``default_availability_zone``); every other service is in
``internal_service_availability_zone``, as in Nova.
"""

COMPUTE_TOPIC = 'compute'


class ServiceZones:
    """The zone of each service, with the zone options read once."""

    def __init__(self, conf):
        self._default_zone = conf.default_availability_zone
        self._internal_zone = conf.internal_service_availability_zone

    def zone(self, service):
        if service.topic == COMPUTE_TOPIC:
            return service.availability_zone or self._default_zone
        return self._internal_zone
