"""Rules of the server actions recovery uses, named as in Nova.

Lock, unlock, stop and start are for the server's project members (and
admins); unlocking a lock someone else holds (an owner's lock for an
admin, an admin's for an owner) and resetting a state are for admins.
Nova keeps them in three modules (lock_server, admin_actions, servers).
"""

from oslo_policy import policy

from nova_forcedown.policies import base

LOCK = 'os_compute_api:os-lock-server:lock'
UNLOCK = 'os_compute_api:os-lock-server:unlock'
UNLOCK_OVERRIDE = 'os_compute_api:os-lock-server:unlock:unlock_override'
RESET_STATE = 'os_compute_api:os-admin-actions:reset_state'
STOP = 'os_compute_api:servers:stop'
START = 'os_compute_api:servers:start'
EVACUATE = 'os_compute_api:os-evacuate'
FORCE_DELETE = 'os_compute_api:os-deferred-delete:force'


def _rule(name, check_str, description, action):
    return policy.DocumentedRuleDefault(
        name=name, check_str=check_str, description=description,
        operations=[{'method': 'POST',
                     'path': '/servers/{server_id}/action (%s)' % action}],
        scope_types=['project'])


rules = [
    _rule(LOCK, base.PROJECT_MEMBER_OR_ADMIN, 'Lock a server.', 'lock'),
    _rule(UNLOCK, base.PROJECT_MEMBER_OR_ADMIN, 'Unlock a server.',
          'unlock'),
    _rule(UNLOCK_OVERRIDE, base.ADMIN,
          'Unlock a server that someone else locked: an admin, a lock of '
          'its owner; an owner, a lock of an admin.', 'unlock'),
    _rule(RESET_STATE, base.ADMIN,
          'Reset the state of a server to active or error.',
          'os-resetState'),
    _rule(STOP, base.PROJECT_MEMBER_OR_ADMIN, 'Stop a server.', 'os-stop'),
    _rule(START, base.PROJECT_MEMBER_OR_ADMIN, 'Start a server.',
          'os-start'),
    _rule(FORCE_DELETE, base.PROJECT_MEMBER_OR_ADMIN,
          'Delete a server at once, whatever its vm_state (no task may '
          'run).', 'forceDelete'),
    _rule(EVACUATE, base.ADMIN,
          'Evacuate a server from a host that is down (forced down, or '
          'without heartbeat) to another host.', 'evacuate'),
]


def list_rules():
    return rules
