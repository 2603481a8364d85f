"""POST /servers/{id}/action bodies, one constant per action and window.

The dispatcher checks that the body has exactly one key, the action;
these check its value. ``os-stop``, ``os-start``, ``unlock`` and, before
2.73, ``lock`` take anything (null by convention), as in Nova.
"""

from nova_forcedown.api import validation

ANYTHING = {
    'type': 'object',
    'additionalProperties': True,
}

# 2.73 and later: lock takes null or an object with a locked_reason.
LOCK_V273 = {
    'type': 'object',
    'properties': {
        'lock': {
            'type': ['object', 'null'],
            'properties': {
                'locked_reason': {'type': 'string', 'minLength': 1,
                                  'maxLength': 255},
            },
            'additionalProperties': False,
        },
    },
    'required': ['lock'],
    'additionalProperties': False,
}

RESET_STATE = {
    'type': 'object',
    'properties': {
        'os-resetState': {
            'type': 'object',
            'properties': {
                'state': {'type': 'string', 'enum': ['active', 'error']},
            },
            'required': ['state'],
            'additionalProperties': False,
        },
    },
    'required': ['os-resetState'],
    'additionalProperties': False,
}


def _evacuate(required=(), **properties):
    return {
        'type': 'object',
        'properties': {
            'evacuate': {
                'type': 'object',
                'properties': dict({'host': validation.fqdn,
                                    'adminPass': {'type': 'string'}},
                                   **properties),
                'required': list(required),
                'additionalProperties': False,
            },
        },
        'required': ['evacuate'],
        'additionalProperties': False,
    }


# evacuate, by window: onSharedStorage required until 2.13, force from
# 2.29 to 2.67; host and adminPass throughout.
EVACUATE = _evacuate(('onSharedStorage',),
                     onSharedStorage=validation.boolean)
EVACUATE_V214 = _evacuate()
EVACUATE_V229 = _evacuate(force=validation.boolean)
EVACUATE_V268 = EVACUATE_V214
