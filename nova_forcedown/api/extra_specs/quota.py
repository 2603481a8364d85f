"""Specs of an instance's resource limits and shares: ``quota:``."""

from nova_forcedown.api.extra_specs.values import Choice
from nova_forcedown.api.extra_specs.values import COUNT
from nova_forcedown.api.extra_specs.values import INTEGER


def _shares(resource):
    """Limit, reservation and shares of one resource (VMware's)."""
    return {
        'quota:%s_limit' % resource: COUNT,
        'quota:%s_reservation' % resource: INTEGER,
        'quota:%s_shares_level' % resource: Choice(
            'custom', 'high', 'normal', 'low'),
        'quota:%s_shares_share' % resource: COUNT,
    }


SPECS = {
    # libvirt's CPU tuning; a negative quota means no limit.
    'quota:cpu_shares': COUNT,
    'quota:cpu_period': COUNT,
    'quota:cpu_quota': INTEGER,
}
for _resource in ('cpu', 'memory', 'disk_io', 'vif'):
    SPECS.update(_shares(_resource))
for _direction in ('read', 'write', 'total'):
    for _unit in ('bytes', 'iops'):
        SPECS['quota:disk_%s_%s_sec' % (_direction, _unit)] = COUNT
for _direction in ('inbound', 'outbound'):
    for _measure in ('average', 'peak', 'burst'):
        SPECS['quota:vif_%s_%s' % (_direction, _measure)] = COUNT
