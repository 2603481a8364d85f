"""Base rules the resource rules refer to."""

from oslo_policy import policy

ADMIN = 'rule:context_is_admin'
ANYONE = '@'
# A reader of the project the request is about, or an admin, as in Nova.
PROJECT_READER_OR_ADMIN = 'rule:project_reader_or_admin'
# A member of that project, or an admin.
PROJECT_MEMBER_OR_ADMIN = 'rule:project_member_or_admin'
# A manager of that project, or an admin.
PROJECT_MANAGER_OR_ADMIN = 'rule:project_manager_or_admin'

DEPRECATED_REASON = (
    'Nova moved from one admin_api rule per API to a rule per operation '
    'with role:admin defaults; nova-forcedown uses the new names.')

rules = [
    policy.RuleDefault('context_is_admin', 'role:admin',
                       'Decides what an administrator is.'),
    policy.RuleDefault('admin_api', 'is_admin:True',
                       'Legacy admin rule, kept for policy files that refer '
                       'to it.'),
    policy.RuleDefault('project_reader_api',
                       'role:reader and project_id:%(project_id)s',
                       'Decides what a reader of a project is.'),
    policy.RuleDefault('project_reader_or_admin',
                       'rule:project_reader_api or rule:context_is_admin',
                       'A reader of the project or an administrator.'),
    policy.RuleDefault('project_member_api',
                       'role:member and project_id:%(project_id)s',
                       'Decides what a member of a project is.'),
    policy.RuleDefault('project_member_or_admin',
                       'rule:project_member_api or rule:context_is_admin',
                       'A member of the project or an administrator.'),
    policy.RuleDefault('project_manager_api',
                       'role:manager and project_id:%(project_id)s',
                       'Decides what a manager of a project is.'),
    policy.RuleDefault('project_manager_or_admin',
                       'rule:project_manager_api or rule:context_is_admin',
                       'A manager of the project or an administrator.'),
]


def one_operation(name, check_str, description, method, path):
    """A project-scoped rule of one API operation."""
    return policy.DocumentedRuleDefault(
        name=name, check_str=check_str, description=description,
        operations=[{'method': method, 'path': path}],
        scope_types=['project'])


def list_rules():
    return rules
