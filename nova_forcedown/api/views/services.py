"""Service views: pure functions of (service, is_up, version, zones)."""

COMPUTE_TOPIC = 'compute'


def timestamp(value):
    """Nova's timestamp text: microseconds, no zone suffix (UTC implied)."""
    if value is None:
        return None
    return value.replace(tzinfo=None).strftime('%Y-%m-%dT%H:%M:%S.%f')


def zone(service, conf):
    if service.topic == COMPUTE_TOPIC:
        return service.availability_zone or conf.default_availability_zone
    return conf.internal_service_availability_zone


def status(service):
    return 'disabled' if service.disabled else 'enabled'


def state(is_up):
    return 'up' if is_up else 'down'


def service(service, is_up, version, conf):
    """A list item, and the 2.53+ update response."""
    view = {
        'id': service.uuid if version.matches('2.53') else service.id,
        'binary': service.binary,
        'host': service.host,
        'zone': zone(service, conf),
        'status': status(service),
        'state': state(is_up),
        'updated_at': timestamp(service.updated_at),
        'disabled_reason': service.disabled_reason,
    }
    if version.matches('2.11'):
        view['forced_down'] = service.forced_down
    return view
