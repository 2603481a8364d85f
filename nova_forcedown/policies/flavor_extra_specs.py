"""os-flavor-extra-specs rules, named as in Nova.

Reading is for readers of the caller's own project (and admins), writing
for admins. The index rule also decides, without refusing the request,
whether flavor views show ``extra_specs`` from microversion 2.61.
"""

from oslo_policy import policy

from nova_forcedown.policies import base

BASE = 'os_compute_api:os-flavor-extra-specs:%s'
INDEX = BASE % 'index'
SHOW = BASE % 'show'
CREATE = BASE % 'create'
UPDATE = BASE % 'update'
DELETE = BASE % 'delete'

_PATH = '/flavors/{flavor_id}/os-extra_specs'


def _rule(name, check_str, description, operations):
    return policy.DocumentedRuleDefault(
        name=name, check_str=check_str, description=description,
        operations=[{'method': method, 'path': path}
                    for method, path in operations],
        scope_types=['project'])


rules = [
    _rule(INDEX, base.PROJECT_READER_OR_ADMIN,
          'List the extra specs of a flavor; from microversion 2.61 also '
          'decides whether flavor views include them.',
          [('GET', _PATH), ('GET', '/flavors/detail'),
           ('GET', '/flavors/{flavor_id}'), ('POST', '/flavors'),
           ('PUT', '/flavors/{flavor_id}')]),
    _rule(SHOW, base.PROJECT_READER_OR_ADMIN,
          'Show one extra spec of a flavor.',
          [('GET', _PATH + '/{flavor_extra_spec_key}')]),
    _rule(CREATE, base.ADMIN, 'Create or replace extra specs of a flavor.',
          [('POST', _PATH)]),
    _rule(UPDATE, base.ADMIN, 'Update one extra spec of a flavor.',
          [('PUT', _PATH + '/{flavor_extra_spec_key}')]),
    _rule(DELETE, base.ADMIN, 'Delete one extra spec of a flavor.',
          [('DELETE', _PATH + '/{flavor_extra_spec_key}')]),
]


def list_rules():
    return rules
