"""Base rules the resource rules refer to."""

from oslo_policy import policy

ADMIN = 'rule:context_is_admin'
ANYONE = '@'

DEPRECATED_REASON = (
    'Nova moved from one admin_api rule per API to a rule per operation '
    'with role:admin defaults; nova-forcedown uses the new names.')

rules = [
    policy.RuleDefault('context_is_admin', 'role:admin',
                       'Decides what an administrator is.'),
    policy.RuleDefault('admin_api', 'is_admin:True',
                       'Legacy admin rule, kept for policy files that refer '
                       'to it.'),
]


def list_rules():
    return rules
