"""GET /os-services/{id}/history query schema (every microversion)."""

from nova_forcedown.api import validation

HISTORY_QUERY = {
    'type': 'object',
    'properties': {
        'limit': dict(validation.single_param,
                      items=validation.non_negative_integer_string),
        'marker': dict(validation.single_param,
                       items=validation.non_negative_integer_string),
    },
    'additionalProperties': False,
}
