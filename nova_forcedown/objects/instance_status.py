"""A server's ``status``, derived from its vm_state and task_state as Nova
does, and the inverse a ``status`` filter needs.

Pure rules, no database: the views show the status and the listing turns a
requested status into the vm and task states to match.
"""

import collections
import itertools

DELETED = 'DELETED'
UNKNOWN = 'UNKNOWN'

_REBOOT = ('rebooting', 'reboot_pending', 'reboot_started')
_HARD_REBOOT = ('rebooting_hard', 'reboot_pending_hard',
                'reboot_started_hard')
_REBUILD = ('rebuilding', 'rebuild_block_device_mapping',
            'rebuild_spawning')
_RESIZE = ('resize_prep', 'resize_migrating', 'resize_migrated',
           'resize_finish')


def _overrides(*groups):
    return {task: status for tasks, status in groups for task in tasks}


# vm_state -> (status when no task overrides it, {task_state: status}).
STATE_MAP = {
    'active': ('ACTIVE', _overrides(
        (_REBOOT, 'REBOOT'), (_HARD_REBOOT, 'HARD_REBOOT'),
        (('updating_password',), 'PASSWORD'), (_REBUILD, 'REBUILD'),
        (('migrating',), 'MIGRATING'), (_RESIZE, 'RESIZE'))),
    'building': ('BUILD', {}),
    'stopped': ('SHUTOFF', _overrides((_RESIZE, 'RESIZE'),
                                      (_REBUILD, 'REBUILD'))),
    'resized': ('VERIFY_RESIZE', {'resize_reverting': 'REVERT_RESIZE'}),
    'paused': ('PAUSED', {'migrating': 'MIGRATING'}),
    'suspended': ('SUSPENDED', {}),
    'rescued': ('RESCUE', {}),
    'error': ('ERROR', _overrides((_REBUILD, 'REBUILD'))),
    'deleted': (DELETED, {}),
    'soft-delete': ('SOFT_DELETED', {}),
    'shelved': ('SHELVED', {}),
    'shelved_offloaded': ('SHELVED_OFFLOADED', {}),
}

# The statuses a view shows its progress in.
WITH_PROGRESS = frozenset(('ACTIVE', 'BUILD', 'REBUILD', 'RESIZE',
                           'VERIFY_RESIZE', 'MIGRATING'))

# The statuses a view shows the server's newest fault in.
WITH_FAULT = frozenset(('ERROR', DELETED))


def status(vm_state, task_state, deleted=False):
    if deleted:
        return DELETED
    default, overrides = STATE_MAP.get(vm_state, (UNKNOWN, {}))
    return overrides.get(task_state, default)


StateFilter = collections.namedtuple('StateFilter',
                                     ('vm_states', 'task_states'))


def states_of(statuses):
    """The vm and task states showing any of ``statuses`` (upper case).

    None when no state shows any of them. ``task_states`` is None when a
    vm_state shows one of them by default: then any task state matches,
    as in Nova (``ERROR`` also finds an error server being rebuilt).
    """
    vm_states, task_states, any_task = set(), set(), False
    for vm_state, (default, overrides) in STATE_MAP.items():
        if default in statuses:
            vm_states.add(vm_state)
            any_task = True
        for task_state, shown in overrides.items():
            if shown in statuses:
                vm_states.add(vm_state)
                task_states.add(task_state)
    if not vm_states:
        return None
    return StateFilter(sorted(vm_states),
                       None if any_task else sorted(task_states))


ALL_STATUSES = frozenset(itertools.chain.from_iterable(
    [default] + list(overrides.values())
    for default, overrides in STATE_MAP.values()))
