"""os-flavor-manage rules, named as in Nova; every one is admin by default.

Listing and showing flavors has no rule: what a caller sees is decided by
the flavors' visibility.
"""

from nova_forcedown.policies import base

BASE = 'os_compute_api:os-flavor-manage:%s'
CREATE = BASE % 'create'
UPDATE = BASE % 'update'
DELETE = BASE % 'delete'


def _rule(name, description, method, path):
    return base.one_operation(name, base.ADMIN, description, method, path)


rules = [
    _rule(CREATE, 'Create a flavor.', 'POST', '/flavors'),
    _rule(UPDATE, 'Update the description of a flavor.', 'PUT',
          '/flavors/{flavor_id}'),
    _rule(DELETE, 'Delete a flavor.', 'DELETE', '/flavors/{flavor_id}'),
]


def list_rules():
    return rules
