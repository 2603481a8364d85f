"""Rules of a server's in-progress live migrations, named as in Nova.

A project's managers (and admins) may ask, as in Nova; nothing here
live-migrates, so the answer never holds a migration.
"""

from nova_forcedown.policies import base

BASE = 'os_compute_api:servers:migrations:%s'
INDEX = BASE % 'index'
SHOW = BASE % 'show'

_PATH = '/servers/{server_id}/migrations'


def _rule(name, description, path):
    return base.one_operation(name, base.PROJECT_MANAGER_OR_ADMIN,
                              description, 'GET', path)


rules = [
    _rule(INDEX, 'List the in-progress live migrations of a server.',
          _PATH),
    _rule(SHOW, 'Show an in-progress live migration of a server.',
          _PATH + '/{migration_id}'),
]


def list_rules():
    return rules
