"""Service views: pure functions of (service, is_up, version, zones).

A listing renders every service with one :class:`Services`, which reads
the microversion and the zone options once, not once per service.
"""

from nova_forcedown.api import microversion

COMPUTE_TOPIC = 'compute'


def timestamp(value):
    """Nova's timestamp text: microseconds, no zone suffix (UTC implied)."""
    if value is None:
        return None
    if value.tzinfo is not None:
        value = value.replace(tzinfo=None)
    # isoformat gives the text of strftime('%Y-%m-%dT%H:%M:%S.%f') at a
    # tenth of its cost, which a listing of thousands notices.
    return value.isoformat(timespec='microseconds')


def zone(service, conf):
    return _zone(service, conf.default_availability_zone,
                 conf.internal_service_availability_zone)


def _zone(service, default_zone, internal_zone):
    """The agent's zone (else the default) for compute, else internal."""
    if service.topic == COMPUTE_TOPIC:
        return service.availability_zone or default_zone
    return internal_zone


def status(service):
    return 'disabled' if service.disabled else 'enabled'


def state(is_up):
    return 'up' if is_up else 'down'


class Services:
    """The service view of one request."""

    def __init__(self, version, conf):
        self.uuid_ids = version.matches(microversion.V2_53)
        self.forced_down = version.matches(microversion.V2_11)
        self.default_zone = conf.default_availability_zone
        self.internal_zone = conf.internal_service_availability_zone

    def service(self, service, is_up):
        view = {
            'id': service.uuid if self.uuid_ids else service.id,
            'binary': service.binary,
            'host': service.host,
            'zone': _zone(service, self.default_zone, self.internal_zone),
            'status': status(service),
            'state': state(is_up),
            'updated_at': timestamp(service.updated_at),
            'disabled_reason': service.disabled_reason,
        }
        if self.forced_down:
            view['forced_down'] = service.forced_down
        return view


def service(service, is_up, version, conf):
    """A list item, and the 2.53+ update response."""
    return Services(version, conf).service(service, is_up)
