"""GET /servers/{id}/os-instance-actions query schemas, by window."""

from nova_forcedown.api import validation

# 2.1 - 2.57: parameters ignored.
INDEX_QUERY = {
    'type': 'object',
    'properties': {},
    'additionalProperties': True,
}

# 2.58 - 2.65: paging and changes-since, each once; nothing else.
INDEX_QUERY_V258 = {
    'type': 'object',
    'properties': {
        'limit': dict(validation.single_param,
                      items=validation.non_negative_integer_string),
        'marker': dict(validation.single_param, items={'type': 'string'}),
        'changes-since': dict(validation.single_param,
                              items={'type': 'string'}),
    },
    'additionalProperties': False,
}

# 2.66 and later: changes-before too.
INDEX_QUERY_V266 = {
    'type': 'object',
    'properties': dict(INDEX_QUERY_V258['properties'], **{
        'changes-before': dict(validation.single_param,
                               items={'type': 'string'}),
    }),
    'additionalProperties': False,
}
