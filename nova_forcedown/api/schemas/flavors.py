"""Flavor request schemas, one constant per microversion window."""

import copy

from nova_forcedown.api import validation
from nova_forcedown.objects import base as objects_base
from nova_forcedown.objects import flavor as flavor_obj


def _repeatable(schema):
    """A query parameter that may repeat; the last value wins."""
    return {'type': 'array', 'items': schema}


# GET /flavors[/detail], 2.1 - 2.74: unknown parameters are ignored.
INDEX_QUERY = {
    'type': 'object',
    'properties': {
        'limit': _repeatable(validation.non_negative_integer_string),
        'marker': _repeatable({'type': 'string'}),
        'is_public': _repeatable({'type': 'string'}),
        'minRam': _repeatable({'type': 'string'}),
        'minDisk': _repeatable({'type': 'string'}),
        'sort_key': _repeatable({'type': 'string',
                                 'enum': list(flavor_obj.SORT_KEYS)}),
        'sort_dir': _repeatable({'type': 'string',
                                 'enum': ['asc', 'desc']}),
    },
    'additionalProperties': True,
}

# 2.75 - 2.101: the same parameters; any other is refused.
INDEX_QUERY_V275 = dict(INDEX_QUERY, additionalProperties=False)

# 2.102 and later: a name filter; rxtx_factor is no longer a sort key.
INDEX_QUERY_V2102 = copy.deepcopy(INDEX_QUERY_V275)
INDEX_QUERY_V2102['properties']['name'] = _repeatable({'type': 'string'})
INDEX_QUERY_V2102['properties']['sort_key']['items']['enum'] = [
    key for key in flavor_obj.SORT_KEYS if key != 'rxtx_factor']


def _count(minimum):
    """RAM, vCPUs, disks: an integer, or a string of digits."""
    return {'type': ['integer', 'string'], 'pattern': '^[0-9]*$',
            'minimum': minimum, 'maximum': objects_base.MAX_INTEGER_ID}


# A flavor id as it is stored. A number in the body is stored as its
# text, and that text obeys the same rule (the schema's length and pattern
# only bind strings): it may not be longer than the column either.
FLAVOR_ID = {'type': 'string', 'minLength': 1, 'maxLength': 255,
             'pattern': '^(?! )[a-zA-Z0-9. _-]+(?<! )$'}
FLAVOR_ID_TEXT = {
    'type': 'object',
    'properties': {'id': FLAVOR_ID},
}

# POST /flavors, 2.1 - 2.54.
CREATE = {
    'type': 'object',
    'properties': {
        'flavor': {
            'type': 'object',
            'properties': {
                'name': validation.name,
                'id': dict(FLAVOR_ID, type=['string', 'number', 'null']),
                'ram': _count(1),
                'vcpus': _count(1),
                'disk': _count(0),
                'OS-FLV-EXT-DATA:ephemeral': _count(0),
                'swap': _count(0),
                'rxtx_factor': {'type': ['number', 'string'],
                                'pattern': r'^[0-9]+(\.[0-9]+)?$',
                                'exclusiveMinimum': 0,
                                'maximum': 3.40282e+38},
                'os-flavor-access:is_public': validation.boolean,
            },
            'required': ['name', 'ram', 'vcpus', 'disk'],
            'additionalProperties': False,
        },
    },
    'required': ['flavor'],
    'additionalProperties': False,
}

_DESCRIPTION = dict(validation.description, maxLength=65535)

# 2.55 - 2.101: a description.
CREATE_V255 = copy.deepcopy(CREATE)
CREATE_V255['properties']['flavor']['properties']['description'] = (
    _DESCRIPTION)

# 2.102 and later: no rxtx_factor.
CREATE_V2102 = copy.deepcopy(CREATE_V255)
del CREATE_V2102['properties']['flavor']['properties']['rxtx_factor']

# PUT /flavors/{id}, 2.55 and later: the description only.
UPDATE_V255 = {
    'type': 'object',
    'properties': {
        'flavor': {
            'type': 'object',
            'properties': {'description': _DESCRIPTION},
            'required': ['description'],
            'additionalProperties': False,
        },
    },
    'required': ['flavor'],
    'additionalProperties': False,
}

EXTRA_SPECS = {
    'type': 'object',
    'patternProperties': {
        '^[a-zA-Z0-9-_:. ]{1,255}$': {'type': ['string', 'number'],
                                      'maxLength': 255},
    },
    'additionalProperties': False,
    # As for aggregate metadata: no 255 characters and a newline.
    'propertyNames': {'maxLength': 255},
}

# POST /flavors/{id}/os-extra_specs: specs to merge.
EXTRA_SPECS_CREATE = {
    'type': 'object',
    'properties': {'extra_specs': EXTRA_SPECS},
    'required': ['extra_specs'],
    'additionalProperties': False,
}

# PUT /flavors/{id}/os-extra_specs/{key}: exactly one spec.
EXTRA_SPEC_UPDATE = dict(EXTRA_SPECS, minProperties=1, maxProperties=1)


def _tenant_access(action):
    """POST /flavors/{id}/action: ``{action: {"tenant": <project id>}}``."""
    return {
        'type': 'object',
        'properties': {
            action: {
                'type': 'object',
                'properties': {
                    'tenant': {'type': 'string', 'minLength': 1,
                               'maxLength': 255},
                },
                'required': ['tenant'],
                'additionalProperties': False,
            },
        },
        'required': [action],
        'additionalProperties': False,
    }


ADD_TENANT_ACCESS = _tenant_access('addTenantAccess')
REMOVE_TENANT_ACCESS = _tenant_access('removeTenantAccess')
