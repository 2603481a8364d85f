"""Bodies of /servers/{id}/metadata, as Nova validates them."""

from nova_forcedown.api import validation

# POST (merge) and PUT (replace) /servers/{id}/metadata.
METADATA = {
    'type': 'object',
    'properties': {'metadata': validation.metadata},
    'required': ['metadata'],
    'additionalProperties': False,
}

# PUT /servers/{id}/metadata/{key}: exactly one item.
META = {
    'type': 'object',
    'properties': {
        'meta': dict(validation.metadata, minProperties=1, maxProperties=1),
    },
    'required': ['meta'],
    'additionalProperties': False,
}
