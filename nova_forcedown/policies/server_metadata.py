"""Rules of a server's metadata, named as in Nova, with Nova's defaults.

A project's readers see its servers' metadata, its members change it;
admins do both for any server. Each is checked against the server's
project.
"""

from oslo_policy import policy

from nova_forcedown.policies import base

BASE = 'os_compute_api:server-metadata:%s'
INDEX = BASE % 'index'
SHOW = BASE % 'show'
CREATE = BASE % 'create'
UPDATE_ALL = BASE % 'update_all'
UPDATE = BASE % 'update'
DELETE = BASE % 'delete'

_PATH = '/servers/{server_id}/metadata'


def _rule(name, check_str, description, method, path):
    return policy.DocumentedRuleDefault(
        name=name, check_str=check_str, description=description,
        operations=[{'method': method, 'path': path}],
        scope_types=['project'])


rules = [
    _rule(INDEX, base.PROJECT_READER_OR_ADMIN, 'List the metadata of a '
          'server.', 'GET', _PATH),
    _rule(SHOW, base.PROJECT_READER_OR_ADMIN, 'Show one metadata item of a '
          'server.', 'GET', _PATH + '/{key}'),
    _rule(CREATE, base.PROJECT_MEMBER_OR_ADMIN, 'Add metadata items to a '
          'server, or change them.', 'POST', _PATH),
    _rule(UPDATE_ALL, base.PROJECT_MEMBER_OR_ADMIN, 'Replace all the '
          'metadata of a server.', 'PUT', _PATH),
    _rule(UPDATE, base.PROJECT_MEMBER_OR_ADMIN, 'Set one metadata item of a '
          'server.', 'PUT', _PATH + '/{key}'),
    _rule(DELETE, base.PROJECT_MEMBER_OR_ADMIN, 'Delete one metadata item of '
          'a server.', 'DELETE', _PATH + '/{key}'),
]


def list_rules():
    return rules
