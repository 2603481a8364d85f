"""Base rules the resource rules refer to."""

from oslo_policy import policy

ADMIN = 'rule:context_is_admin'
ANYONE = '@'
# A reader of the target's project, or an admin: Nova's default for what a
# project's own users may see of their resources.
PROJECT_READER_OR_ADMIN = 'rule:project_reader_or_admin'

DEPRECATED_REASON = (
    'Nova moved from one admin_api rule per API to a rule per operation '
    'with role:admin defaults; nova-forcedown uses the new names.')

rules = [
    policy.RuleDefault('context_is_admin', 'role:admin',
                       'Decides what an administrator is.'),
    policy.RuleDefault('admin_api', 'is_admin:True',
                       'Legacy admin rule, kept for policy files that refer '
                       'to it.'),
    policy.RuleDefault('project_reader',
                       'role:reader and project_id:%(project_id)s',
                       'A reader of the project that owns the target.'),
    policy.RuleDefault('project_reader_or_admin',
                       'rule:project_reader or rule:context_is_admin',
                       'A reader of the owning project, or an admin.'),
]


def list_rules():
    return rules
