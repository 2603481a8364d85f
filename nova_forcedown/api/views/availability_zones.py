"""Availability zone views: pure functions of the zones of a listing.

The summary hides the internal zone and never shows hosts; the detail
shows every zone, and the host tree of the available ones.
"""

from nova_forcedown.objects import base as objects_base


def zone_list(zones):
    return {'availabilityZoneInfo': [_summary(zone) for zone in zones
                                     if not zone.internal]}


def zone_detail(zones):
    return {'availabilityZoneInfo': [_detail(zone) for zone in zones]}


def _summary(zone):
    return {'zoneName': zone.name,
            'zoneState': {'available': zone.available},
            'hosts': None}


def _detail(zone):
    view = _summary(zone)
    if zone.hosts is not None:
        view['hosts'] = {
            host: {entry.service.binary: _service(entry)
                   for entry in entries}
            for host, entries in zone.hosts.items()}
    return view


def _service(entry):
    return {'available': entry.is_up,
            'active': not entry.service.disabled,
            'updated_at': objects_base.timestamp(entry.service.updated_at)}
