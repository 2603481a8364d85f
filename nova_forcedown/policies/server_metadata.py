"""Rules of a server's metadata, named as in Nova, with Nova's defaults.

A project's readers see its servers' metadata, its members change it;
admins do both for any server. Each is checked against the server's
project.
"""

from nova_forcedown.policies import base

BASE = 'os_compute_api:server-metadata:%s'
INDEX = BASE % 'index'
SHOW = BASE % 'show'
CREATE = BASE % 'create'
UPDATE_ALL = BASE % 'update_all'
UPDATE = BASE % 'update'
DELETE = BASE % 'delete'

_PATH = '/servers/{server_id}/metadata'
_READER = base.PROJECT_READER_OR_ADMIN
_MEMBER = base.PROJECT_MEMBER_OR_ADMIN
_rule = base.one_operation

rules = [
    _rule(INDEX, _READER, 'List the metadata of a server.', 'GET', _PATH),
    _rule(SHOW, _READER, 'Show one metadata item of a server.', 'GET',
          _PATH + '/{key}'),
    _rule(CREATE, _MEMBER, 'Add metadata items to a server, or change '
          'them.', 'POST', _PATH),
    _rule(UPDATE_ALL, _MEMBER, 'Replace all the metadata of a server.', 'PUT',
          _PATH),
    _rule(UPDATE, _MEMBER, 'Set one metadata item of a server.', 'PUT',
          _PATH + '/{key}'),
    _rule(DELETE, _MEMBER, 'Delete one metadata item of a server.', 'DELETE',
          _PATH + '/{key}'),
]


def list_rules():
    return rules
