"""os-services rules, named as in Nova."""

from oslo_policy import policy

from nova_forcedown.policies import base

BASE = 'os_compute_api:os-services:%s'
LIST = BASE % 'list'
UPDATE = BASE % 'update'
DELETE = BASE % 'delete'
HISTORY = BASE % 'history'

_DEPRECATED = policy.DeprecatedRule(
    'os_compute_api:os-services', 'rule:admin_api',
    deprecated_reason=base.DEPRECATED_REASON, deprecated_since='21.0.0')

rules = [
    policy.DocumentedRuleDefault(
        name=LIST, check_str=base.ADMIN,
        description='List all running compute services in a cloud, or '
                    'show one with its entity tag (from 2.53; not Nova).',
        operations=[{'method': 'GET', 'path': '/os-services'},
                    {'method': 'GET', 'path': '/os-services/{service_id}'}],
        scope_types=['project'], deprecated_rule=_DEPRECATED),
    policy.DocumentedRuleDefault(
        name=UPDATE, check_str=base.ADMIN,
        description='Enable, disable or force down a compute service.',
        operations=[
            {'method': 'PUT', 'path': '/os-services/enable'},
            {'method': 'PUT', 'path': '/os-services/disable'},
            {'method': 'PUT', 'path': '/os-services/disable-log-reason'},
            {'method': 'PUT', 'path': '/os-services/force-down'},
            {'method': 'PUT', 'path': '/os-services/{service_id}'},
        ],
        scope_types=['project'], deprecated_rule=_DEPRECATED),
    policy.DocumentedRuleDefault(
        name=DELETE, check_str=base.ADMIN,
        description='Delete a compute service.',
        operations=[{'method': 'DELETE', 'path': '/os-services/{service_id}'}],
        scope_types=['project'], deprecated_rule=_DEPRECATED),
    policy.DocumentedRuleDefault(
        name=HISTORY, check_str=base.ADMIN,
        description='Show the history of a compute service: who forced it '
                    'down or cleared that, disabled or enabled it, when, '
                    'and what changed. Not a Nova rule.',
        operations=[{'method': 'GET',
                     'path': '/os-services/{service_id}/history'}],
        scope_types=['project']),
]


def list_rules():
    return rules
