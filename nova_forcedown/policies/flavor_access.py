"""os-flavor-access rules, named as in Nova; every one is admin by default.

The base rule governs listing who may use a private flavor.
"""

from nova_forcedown.policies import base

LIST = 'os_compute_api:os-flavor-access'
ADD = 'os_compute_api:os-flavor-access:add_tenant_access'
REMOVE = 'os_compute_api:os-flavor-access:remove_tenant_access'


def _rule(name, description, method, path):
    return base.one_operation(name, base.ADMIN, description, method, path)


rules = [
    _rule(LIST, 'List the projects a private flavor is shared with.',
          'GET', '/flavors/{flavor_id}/os-flavor-access'),
    _rule(ADD, 'Share a private flavor with a project.', 'POST',
          '/flavors/{flavor_id}/action (addTenantAccess)'),
    _rule(REMOVE, 'Stop sharing a private flavor with a project.', 'POST',
          '/flavors/{flavor_id}/action (removeTenantAccess)'),
]


def list_rules():
    return rules
