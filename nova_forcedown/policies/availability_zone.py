"""os-availability-zone rules, named as in Nova: anyone may list the zones,
only an admin sees their hosts and services."""

from oslo_policy import policy

from nova_forcedown.policies import base

BASE = 'os_compute_api:os-availability-zone:%s'
LIST = BASE % 'list'
DETAIL = BASE % 'detail'

rules = [
    policy.DocumentedRuleDefault(
        name=LIST, check_str=base.ANYONE,
        description='List availability zones and whether each is '
                    'available, without their hosts.',
        operations=[{'method': 'GET', 'path': '/os-availability-zone'}],
        scope_types=['project']),
    policy.DocumentedRuleDefault(
        name=DETAIL, check_str=base.ADMIN,
        description='List availability zones with their hosts and the '
                    'state of each service.',
        operations=[{'method': 'GET',
                     'path': '/os-availability-zone/detail'}],
        scope_types=['project']),
]


def list_rules():
    return rules
