"""Rules of the servers read side, named as in Nova, with Nova's defaults:
a project's readers see its servers; all projects, the admin-only
filters, the extended attributes and the host's status are for admins.
"""

from oslo_policy import policy

from nova_forcedown.policies import base

BASE = 'os_compute_api:servers:%s'
INDEX = BASE % 'index'
INDEX_ALL_TENANTS = BASE % 'index:get_all_tenants'
DETAIL = BASE % 'detail'
DETAIL_ALL_TENANTS = BASE % 'detail:get_all_tenants'
ALLOW_ALL_FILTERS = BASE % 'allow_all_filters'
SHOW = BASE % 'show'
SHOW_FLAVOR_EXTRA_SPECS = BASE % 'show:flavor-extra-specs'
SHOW_HOST_STATUS = BASE % 'show:host_status'
SHOW_HOST_STATUS_UNKNOWN_ONLY = BASE % 'show:host_status:unknown-only'
CREATE = BASE % 'create'
CREATE_FORCED_HOST = BASE % 'create:forced_host'
CREATE_REQUESTED_DESTINATION = BASE % 'create:requested_destination'
CREATE_ATTACH_NETWORK = BASE % 'create:attach_network'
CREATE_ZERO_DISK_FLAVOR = BASE % 'create:zero_disk_flavor'
DELETE = BASE % 'delete'
# Nova keeps this one in a module of its own; it governs the same views.
EXTENDED_ATTRIBUTES = 'os_compute_api:os-extended-server-attributes'

_VIEWS = [{'method': 'GET', 'path': '/servers/{server_id}'},
          {'method': 'GET', 'path': '/servers/detail'}]


def _rule(name, check_str, description, operations):
    return policy.DocumentedRuleDefault(
        name=name, check_str=check_str, description=description,
        operations=operations, scope_types=['project'])


rules = [
    _rule(INDEX, base.PROJECT_READER_OR_ADMIN, 'List servers.',
          [{'method': 'GET', 'path': '/servers'}]),
    _rule(DETAIL, base.PROJECT_READER_OR_ADMIN,
          'List servers with details.',
          [{'method': 'GET', 'path': '/servers/detail'}]),
    _rule(INDEX_ALL_TENANTS, base.ADMIN,
          'List the servers of all projects (all_tenants).',
          [{'method': 'GET', 'path': '/servers'}]),
    _rule(DETAIL_ALL_TENANTS, base.ADMIN,
          'List the servers of all projects, with details (all_tenants).',
          [{'method': 'GET', 'path': '/servers/detail'}]),
    _rule(ALLOW_ALL_FILTERS, base.ADMIN,
          'Filter server listings by every filter, including host, node, '
          'deleted and, before 2.83, vm_state and task_state; without it '
          'those filters are ignored.',
          [{'method': 'GET', 'path': '/servers'},
           {'method': 'GET', 'path': '/servers/detail'}]),
    _rule(SHOW, base.PROJECT_READER_OR_ADMIN, 'Show a server.',
          [{'method': 'GET', 'path': '/servers/{server_id}'}]),
    _rule(SHOW_FLAVOR_EXTRA_SPECS, base.PROJECT_READER_OR_ADMIN,
          'Show the extra specs of the flavor embedded in a server view '
          '(from microversion 2.47).', _VIEWS),
    _rule(SHOW_HOST_STATUS, base.ADMIN,
          "Show a server's host_status (from microversion 2.16): UP, DOWN, "
          'MAINTENANCE, UNKNOWN or empty.', _VIEWS),
    _rule(SHOW_HOST_STATUS_UNKNOWN_ONLY, base.ADMIN,
          "Show a server's host_status only when it is UNKNOWN, for those "
          'the show:host_status rule refuses.', _VIEWS),
    _rule(CREATE, base.PROJECT_MEMBER_OR_ADMIN, 'Create a server.',
          [{'method': 'POST', 'path': '/servers'}]),
    _rule(CREATE_FORCED_HOST, base.ADMIN,
          'Create a server on the host (and node) its availability_zone '
          'names as zone:host[:node].',
          [{'method': 'POST', 'path': '/servers'}]),
    _rule(CREATE_REQUESTED_DESTINATION, base.ADMIN,
          'Create a server on the host or hypervisor_hostname it names '
          '(from microversion 2.74); the scheduler still filters it.',
          [{'method': 'POST', 'path': '/servers'}]),
    _rule(CREATE_ATTACH_NETWORK, base.PROJECT_MEMBER_OR_ADMIN,
          'Create a server with the networks it names.',
          [{'method': 'POST', 'path': '/servers'}]),
    _rule(CREATE_ZERO_DISK_FLAVOR, base.ADMIN,
          'Create a server from an image with a flavor of no root disk.',
          [{'method': 'POST', 'path': '/servers'}]),
    _rule(DELETE, base.PROJECT_MEMBER_OR_ADMIN, 'Delete a server.',
          [{'method': 'DELETE', 'path': '/servers/{server_id}'}]),
    _rule(EXTENDED_ATTRIBUTES, base.ADMIN,
          'Show the OS-EXT-SRV-ATTR attributes of servers (host, node, '
          'instance name and, from 2.3, more).', _VIEWS),
]


def list_rules():
    return rules
