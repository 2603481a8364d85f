"""os-hypervisors rules, named as in Nova."""

from oslo_policy import policy

from nova_forcedown.policies import base

BASE = 'os_compute_api:os-hypervisors:%s'
LIST = BASE % 'list'
LIST_DETAIL = BASE % 'list-detail'
SHOW = BASE % 'show'
STATISTICS = BASE % 'statistics'
UPTIME = BASE % 'uptime'
SEARCH = BASE % 'search'
SERVERS = BASE % 'servers'

_DEPRECATED = policy.DeprecatedRule(
    'os_compute_api:os-hypervisors', 'rule:admin_api',
    deprecated_reason=base.DEPRECATED_REASON, deprecated_since='21.0.0')


def _rule(name, description, path):
    return policy.DocumentedRuleDefault(
        name=name, check_str=base.ADMIN, description=description,
        operations=[{'method': 'GET', 'path': path}],
        scope_types=['project'], deprecated_rule=_DEPRECATED)


rules = [
    _rule(LIST, 'List all hypervisors.', '/os-hypervisors'),
    _rule(LIST_DETAIL, 'List all hypervisors with details.',
          '/os-hypervisors/detail'),
    _rule(STATISTICS, 'Show summary statistics for all hypervisors over '
                      'all compute nodes (until microversion 2.87).',
          '/os-hypervisors/statistics'),
    _rule(SHOW, 'Show details for a hypervisor.',
          '/os-hypervisors/{hypervisor_id}'),
    _rule(UPTIME, 'Show the uptime of a hypervisor (until 2.87).',
          '/os-hypervisors/{hypervisor_id}/uptime'),
    _rule(SEARCH, 'Search hypervisors by hostname pattern (until 2.52).',
          '/os-hypervisors/{hypervisor_hostname_pattern}/search'),
    _rule(SERVERS, 'List the servers on hypervisors matching a hostname '
                   'pattern (until 2.52).',
          '/os-hypervisors/{hypervisor_hostname_pattern}/servers'),
]


def list_rules():
    return rules
