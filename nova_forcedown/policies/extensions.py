"""Extension listing rule: anyone may list the legacy extensions."""

from oslo_policy import policy

from nova_forcedown.policies import base

LIST = 'os_compute_api:extensions'

rules = [
    policy.DocumentedRuleDefault(
        name=LIST, check_str=base.ANYONE,
        description='List available extensions and show their details.',
        operations=[{'method': 'GET', 'path': '/extensions'},
                    {'method': 'GET', 'path': '/extensions/{alias}'}],
        scope_types=['project']),
]


def list_rules():
    return rules
