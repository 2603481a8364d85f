"""os-host-servers rules: host-wide server operations, for admins.

Not in Nova, which has no such operations; named in its pattern.
"""

from oslo_policy import policy

from nova_forcedown.policies import base

BASE = 'os_compute_api:os-host-servers:%s'
MARK_SHUTDOWN = BASE % 'mark_shutdown'
RESET_STATE = BASE % 'reset_state'


def _rule(name, description, action):
    return policy.DocumentedRuleDefault(
        name=name, check_str=base.ADMIN, description=description,
        operations=[{'method': 'POST',
                     'path': '/os-host-servers/{host_name}/action (%s)'
                             % action}],
        scope_types=['project'])


rules = [
    _rule(MARK_SHUTDOWN,
          'Mark every server of a fenced host powered off (power_state '
          'shutdown).', 'mark_shutdown'),
    _rule(RESET_STATE,
          'Reset the state of every server of a fenced host to active or '
          'error.', 'os-resetState'),
]


def list_rules():
    return rules
