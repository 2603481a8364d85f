"""os-migrations rules, named as in Nova.

A project's managers (and admins) list migrations; those of other
projects, and the host and node fields, are for admins.
"""

from oslo_policy import policy

from nova_forcedown.policies import base

BASE = 'os_compute_api:os-migrations:%s'
INDEX = BASE % 'index'
INDEX_ALL_PROJECTS = BASE % 'index:all_projects'
INDEX_HOST = BASE % 'index:host'

_OPERATIONS = [{'method': 'GET', 'path': '/os-migrations'}]


def _rule(name, check_str, description):
    return policy.DocumentedRuleDefault(
        name=name, check_str=check_str, description=description,
        operations=_OPERATIONS, scope_types=['project'])


rules = [
    _rule(INDEX, base.PROJECT_MANAGER_OR_ADMIN, 'List migrations.'),
    _rule(INDEX_ALL_PROJECTS, base.ADMIN,
          'List the migrations of every project (without a project_id '
          'filter of the caller\'s own project, from 2.80).'),
    _rule(INDEX_HOST, base.ADMIN,
          'See the source and destination hosts and nodes of migrations; '
          'without it they are null.'),
]


def list_rules():
    return rules
