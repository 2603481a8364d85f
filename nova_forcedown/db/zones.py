"""Where a host is, in SQL: the hosts of the aggregates that have a zone.

The rule, stated in Python by :class:`nova_forcedown.objects.host_zones.
HostZones`: a host is in the zone of each of its aggregates whose metadata
has an ``availability_zone``, and in the default zone when it is in none.
Every statement that places hosts in zones (the zone listings, the
scheduler's zone filter, the fence-storm guard) is built from these
selects, so the rule is written once in SQL too.
"""

import collections

import sqlalchemy as sa

from nova_forcedown.db import models

AZ_KEY = models.AZ_KEY

_HOSTS = models.AggregateHost.__table__
_METADATA = models.AggregateMetadata.__table__

HOST = _HOSTS.c.host
ZONE = _METADATA.c.value

Membership = collections.namedtuple('Membership',
                                    ('host', 'aggregate_id', 'zone'))


def _zoned(*columns):
    return (sa.select(*columns)
            .join(_METADATA, _METADATA.c.aggregate_id == _HOSTS.c.aggregate_id)
            .where(_METADATA.c.key == AZ_KEY))


def memberships(*criteria):
    """SELECT the :class:`Membership` rows (``criteria`` on them)."""
    return _zoned(HOST, _HOSTS.c.aggregate_id, ZONE).where(*criteria)


def zoned_hosts(*criteria):
    """SELECT the hosts that are in a named zone (``criteria`` on them)."""
    return _zoned(HOST).where(*criteria)
