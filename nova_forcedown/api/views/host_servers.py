"""What a host-wide server operation answers: each server it changed."""

from nova_forcedown.objects import instance_status

_STATES = ('vm_state', 'power_state', 'task_state')


def _states(server):
    shown = {state: getattr(server, state) for state in _STATES}
    shown['status'] = instance_status.status(server.vm_state,
                                             server.task_state)
    return shown


def change(record):
    """One server's uuid and its states before and after the change."""
    return {'id': record.after.uuid, 'old': _states(record.before),
            'new': _states(record.after)}


def changes(records):
    return {'servers': [change(record) for record in records]}
