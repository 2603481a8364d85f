"""os-aggregates rules, named as in Nova; every one is admin by default."""

from nova_forcedown.policies import base

BASE = 'os_compute_api:os-aggregates:%s'
INDEX = BASE % 'index'
CREATE = BASE % 'create'
SHOW = BASE % 'show'
UPDATE = BASE % 'update'
DELETE = BASE % 'delete'
ADD_HOST = BASE % 'add_host'
REMOVE_HOST = BASE % 'remove_host'
SET_METADATA = BASE % 'set_metadata'
# Nova's newer naming, for the one rule added after the rename.
IMAGES = 'compute:aggregates:images'


def _rule(name, description, method, path):
    return base.one_operation(name, base.ADMIN, description, method, path)


rules = [
    _rule(INDEX, 'List all aggregates.', 'GET', '/os-aggregates'),
    _rule(CREATE, 'Create an aggregate.', 'POST', '/os-aggregates'),
    _rule(SHOW, 'Show details for an aggregate.', 'GET',
          '/os-aggregates/{aggregate_id}'),
    _rule(UPDATE, 'Update the name and/or availability zone of an '
                  'aggregate.', 'PUT', '/os-aggregates/{aggregate_id}'),
    _rule(DELETE, 'Delete an aggregate.', 'DELETE',
          '/os-aggregates/{aggregate_id}'),
    _rule(ADD_HOST, 'Add a host to an aggregate.', 'POST',
          '/os-aggregates/{aggregate_id}/action (add_host)'),
    _rule(REMOVE_HOST, 'Remove a host from an aggregate.', 'POST',
          '/os-aggregates/{aggregate_id}/action (remove_host)'),
    _rule(SET_METADATA, 'Create, replace or delete metadata of an '
                        'aggregate.', 'POST',
          '/os-aggregates/{aggregate_id}/action (set_metadata)'),
    _rule(IMAGES, 'Request image caching for an aggregate (from '
                  'microversion 2.81).', 'POST',
          '/os-aggregates/{aggregate_id}/images'),
]


def list_rules():
    return rules
