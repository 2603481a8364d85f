"""os-hypervisors query schemas, one constant per microversion window."""

from nova_forcedown.api import validation

# GET /os-hypervisors[/detail], 2.1 - 2.32: no parameters (others dropped).
INDEX_QUERY = {
    'type': 'object',
    'properties': {},
    'additionalProperties': True,
}

# 2.33 - 2.52: paging; repeats allowed, the last one wins.
INDEX_QUERY_V233 = {
    'type': 'object',
    'properties': {
        'limit': {'type': 'array',
                  'items': validation.non_negative_integer_string},
        'marker': {'type': 'array', 'items': {'type': 'string'}},
    },
    'additionalProperties': True,
}

# 2.53 and later: each parameter once; hostname pattern and with_servers;
# anything else is refused.
INDEX_QUERY_V253 = {
    'type': 'object',
    'properties': {
        'limit': dict(validation.single_param,
                      items=validation.non_negative_integer_string),
        'marker': dict(validation.single_param, items={'type': 'string'}),
        'hypervisor_hostname_pattern': dict(validation.single_param,
                                            items=validation.fqdn),
        'with_servers': dict(validation.single_param,
                             items=validation.boolean),
    },
    'additionalProperties': False,
}

# GET /os-hypervisors/{id}, 2.1 - 2.52: parameters ignored.
SHOW_QUERY = {
    'type': 'object',
    'properties': {},
    'additionalProperties': True,
}

# 2.53 and later: only with_servers.
SHOW_QUERY_V253 = {
    'type': 'object',
    'properties': {
        'with_servers': dict(validation.single_param,
                             items=validation.boolean),
    },
    'additionalProperties': False,
}
