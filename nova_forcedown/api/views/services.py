"""Service views: pure functions of (service, is_up, version, zones).

A listing renders every service with one :class:`Services`, which reads
the microversion and the zone options once, not once per service. What a
service's state, status and zone are is the servicegroup's rule.
"""

from nova_forcedown.api import microversion
from nova_forcedown.objects import base as objects_base
from nova_forcedown.servicegroup import status as service_status


class Services:
    """The service view of one request."""

    def __init__(self, version, service_zones):
        self.uuid_ids = version.matches(microversion.V2_53)
        self.forced_down = version.matches(microversion.V2_11)
        self.zones = service_zones

    def service(self, service, is_up):
        view = {
            'id': service.uuid if self.uuid_ids else service.id,
            'binary': service.binary,
            'host': service.host,
            'zone': self.zones.zone(service),
            'status': service_status.status(service),
            'state': service_status.state(is_up),
            'updated_at': objects_base.timestamp(service.updated_at),
            'disabled_reason': service.disabled_reason,
        }
        if self.forced_down:
            view['forced_down'] = service.forced_down
        return view


def service(service, is_up, version, service_zones):
    """A list item, and the 2.53+ update response."""
    return Services(version, service_zones).service(service, is_up)
