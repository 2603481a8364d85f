"""GET /os-migrations query schemas, one constant per window."""

from nova_forcedown.api import validation

_FILTERS = ('hidden', 'host', 'instance_uuid', 'source_compute', 'status',
            'migration_type')

# 2.1 - 2.58: the filters; anything else dropped.
INDEX_QUERY = {
    'type': 'object',
    'properties': {name: {'type': 'array', 'items': {'type': 'string'}}
                   for name in _FILTERS},
    'additionalProperties': True,
}


def _strict(*names):
    properties = {name: dict(validation.single_param,
                             items={'type': 'string'})
                  for name in _FILTERS + names}
    properties['limit'] = dict(validation.single_param,
                               items=validation.non_negative_integer_string)
    return {'type': 'object', 'properties': properties,
            'additionalProperties': False}


# 2.59 - 2.65: paging and changes-since, each parameter once, no other.
INDEX_QUERY_V259 = _strict('marker', 'changes-since')
# 2.66 - 2.79: changes-before too.
INDEX_QUERY_V266 = _strict('marker', 'changes-since', 'changes-before')
# 2.80 and later: user_id and project_id too.
INDEX_QUERY_V280 = _strict('marker', 'changes-since', 'changes-before',
                           'user_id', 'project_id')
