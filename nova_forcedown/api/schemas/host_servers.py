"""POST /os-host-servers/{host_name}/action bodies, one constant per action.

The dispatcher checks that the body has exactly one key, the action;
these check its value. ``os-resetState`` is the per-server action's body,
so a tool that resets one server resets a host's servers the same way.
"""

from nova_forcedown.api.schemas import server_actions

MARK_SHUTDOWN = {
    'type': 'object',
    'properties': {
        'mark_shutdown': {'type': 'null'},
    },
    'required': ['mark_shutdown'],
    'additionalProperties': False,
}

RESET_STATE = server_actions.RESET_STATE
