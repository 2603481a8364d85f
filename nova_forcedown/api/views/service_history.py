"""The view of a service's history entry."""

from nova_forcedown.objects import base

_KEYS = ('id', 'event', 'host', 'binary', 'user_id', 'project_id',
         'request_id')


def entry(record, changes):
    """A history entry and its ``changes`` (a list of Change)."""
    view = {key: getattr(record, key) for key in _KEYS}
    view['service_id'] = record.service_uuid
    view['created_at'] = base.timestamp(record.created_at)
    view['changes'] = [{'field': change.field, 'old_value': change.old,
                        'new_value': change.new} for change in changes]
    return view
