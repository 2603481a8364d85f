"""os-aggregates request schemas, one constant per microversion window."""

import copy

from nova_forcedown.api import validation

_ZONE = {'oneOf': [validation.az_name, {'type': 'null'}]}


def _action(name, properties):
    """``{name: {properties...}}``, every property required, nothing else."""
    return {
        'type': 'object',
        'properties': {
            name: {
                'type': 'object',
                'properties': properties,
                'required': sorted(properties),
                'additionalProperties': False,
            },
        },
        'required': [name],
        'additionalProperties': False,
    }


# POST /os-aggregates: a name, and a zone or null.
CREATE = {
    'type': 'object',
    'properties': {
        'aggregate': {
            'type': 'object',
            'properties': {
                'name': validation.name,
                'availability_zone': _ZONE,
            },
            'required': ['name'],
            'additionalProperties': False,
        },
    },
    'required': ['aggregate'],
    'additionalProperties': False,
}

# /v2: spaces around the name and the zone are allowed (and stripped).
CREATE_V20 = copy.deepcopy(CREATE)
CREATE_V20['properties']['aggregate']['properties'].update(
    name=validation.name_with_leading_trailing_spaces,
    availability_zone={'oneOf': [
        validation.az_name_with_leading_trailing_spaces, {'type': 'null'}]})

# PUT /os-aggregates/{id}: a name (spaces around it are stripped), a zone,
# or both.
UPDATE = {
    'type': 'object',
    'properties': {
        'aggregate': {
            'type': 'object',
            'properties': {
                'name': validation.name_with_leading_trailing_spaces,
                'availability_zone': _ZONE,
            },
            'anyOf': [{'required': ['name']},
                      {'required': ['availability_zone']}],
            'additionalProperties': False,
        },
    },
    'required': ['aggregate'],
    'additionalProperties': False,
}

# /v2: spaces around the zone are allowed too.
UPDATE_V20 = copy.deepcopy(UPDATE)
UPDATE_V20['properties']['aggregate']['properties']['availability_zone'] = (
    CREATE_V20['properties']['aggregate']['properties']['availability_zone'])

# POST /os-aggregates/{id}/action, one action per body.
ADD_HOST = _action('add_host', {'host': validation.fqdn})
REMOVE_HOST = _action('remove_host', {'host': validation.fqdn})
SET_METADATA = _action('set_metadata',
                       {'metadata': validation.metadata_with_null})

# POST /os-aggregates/{id}/images, 2.81 and later.
CACHE_IMAGES_V281 = {
    'type': 'object',
    'properties': {
        'cache': {
            'type': 'array',
            'minItems': 1,
            'items': {
                'type': 'object',
                'properties': {'id': validation.uuid},
                'required': ['id'],
                'additionalProperties': False,
            },
        },
    },
    'required': ['cache'],
    'additionalProperties': False,
}

# GET /os-aggregates and /os-aggregates/{id}, 2.1 - 2.101: no parameters;
# unknown ones are dropped.
QUERY = {
    'type': 'object',
    'properties': {},
    'additionalProperties': True,
}

# 2.102 and later: unknown parameters are refused.
QUERY_V2102 = copy.deepcopy(QUERY)
QUERY_V2102['additionalProperties'] = False
