"""os-services request schemas, one constant per microversion window."""

import copy

from nova_forcedown.api import validation

# PUT /os-services/{enable,disable,disable-log-reason}, 2.1 - 2.10.
UPDATE_BY_ACTION = {
    'type': 'object',
    'properties': {
        'host': validation.fqdn,
        'binary': validation.name_string,
        'disabled_reason': validation.name_string,
    },
    'required': ['host', 'binary'],
    'additionalProperties': False,
}

# 2.11 - 2.52: force-down joins the actions, with its forced_down field.
UPDATE_BY_ACTION_V211 = copy.deepcopy(UPDATE_BY_ACTION)
UPDATE_BY_ACTION_V211['properties']['forced_down'] = validation.boolean

# PUT /os-services/{uuid}, 2.53 and later.
UPDATE_V253 = {
    'type': 'object',
    'properties': {
        'status': {'type': 'string', 'enum': ['enabled', 'disabled']},
        'disabled_reason': validation.name_string,
        'forced_down': validation.boolean,
    },
    'additionalProperties': False,
}

_QUERY_PARAM = {'type': 'array', 'items': {'type': 'string'}}

# GET /os-services, 2.1 - 2.74: unknown parameters are dropped.
INDEX_QUERY = {
    'type': 'object',
    'properties': {
        'host': _QUERY_PARAM,
        'binary': _QUERY_PARAM,
    },
    'additionalProperties': True,
}

# 2.75 and later: unknown parameters are refused.
INDEX_QUERY_V275 = copy.deepcopy(INDEX_QUERY)
INDEX_QUERY_V275['additionalProperties'] = False
