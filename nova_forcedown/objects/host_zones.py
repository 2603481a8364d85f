"""Where a host is: the zone of its aggregates, else the default zone.

The one rule of a host's zone (:class:`HostZones`) and the reads it is
built from, for every caller that shows or chooses by zone: the API's
views, the scheduler, the liveness of zones, the monitor.
"""

from nova_forcedown.db import aggregates as db_aggregates
from nova_forcedown.db import engine as db_engine


def _zone_text(zones):
    """The zone of a host in aggregates of ``zones``; None in none."""
    return ','.join(sorted(zones)) or None


def _zones_by_host(memberships):
    """{host: its zone text} of zone_memberships rows, read once.

    A host in one zone, as nearly every host is, costs one dict entry
    whose value is its zone's name, shared by every host of that zone:
    no set per host, no list of the rows (at 100,000 hosts these held
    about 30 MB while a services listing was rendered).
    """
    names = {}
    zones = {}
    several = {}
    for host, _, zone in memberships:
        zone = names.setdefault(zone, zone)
        known = zones.setdefault(host, zone)
        if known != zone:
            several.setdefault(host, {known}).add(zone)
    for host, names_of_host in several.items():
        zones[host] = _zone_text(names_of_host)
    if '' in names:
        for host, text in zones.items():
            if text == '':
                zones[host] = None
    return zones


def zones_of_one_host(host, zones):
    """{host: its zone text} of ``host`` in aggregates of ``zones``."""
    return {host: _zone_text(zones)}


def zone_of(memberships):
    """The zone text of a host in ``memberships`` (zone_memberships rows)."""
    return _zone_text({membership.zone for membership in memberships})


def zones_by_host(context, hosts=None, zone=None):
    """{host: its zone text} for hosts in a zone, in one statement.

    Of every host, of ``hosts``, or of the hosts in ``zone``. A host in
    aggregates of several zones (made before the rules, or by hand) shows
    them joined by commas, as Nova shows it.
    """
    with db_engine.reading(context):
        return _zones_by_host(db_aggregates.zone_memberships_as_read(
            context, hosts, zone))


def hosts_in_zone(context, zone):
    """The hosts whose zone is ``zone`` (not also another), sorted."""
    return sorted(host for host, text in
                  zones_by_host(context, zone=zone).items() if text == zone)


class HostZones:
    """The zone of each compute host: the one rule of where a host is.

    A host is in the zone of its aggregates (several, joined by commas, if
    it was put in more than one), else in ``default_availability_zone``.
    """

    def __init__(self, zones_by_host, default_zone):
        self._zones_by_host = zones_by_host
        self.default_zone = default_zone

    @classmethod
    def load(cls, context, conf, hosts=None):
        """The zones of every host (one statement), or only of ``hosts``."""
        return cls(zones_by_host(context, hosts),
                   conf.default_availability_zone)

    @classmethod
    def of_host(cls, conf, host, zones):
        """The zone of ``host`` alone, in aggregates of ``zones``."""
        return cls(zones_of_one_host(host, zones),
                   conf.default_availability_zone)

    def of(self, host):
        return self._zones_by_host.get(host) or self.default_zone
