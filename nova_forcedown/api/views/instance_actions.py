"""Instance action views, as Nova renders them at each microversion."""

from nova_forcedown.api.views import servers as server_views
from nova_forcedown.objects import base

_ACTION_KEYS = ('action', 'instance_uuid', 'request_id', 'user_id',
                'project_id', 'start_time', 'message')
_TIMES = ('start_time', 'updated_at', 'finish_time')


def _value(record, key):
    value = getattr(record, key)
    return base.timestamp(value) if key in _TIMES else value


def action(record, with_updated_at):
    """An action: its keys, and updated_at from 2.58."""
    keys = _ACTION_KEYS + (('updated_at',) if with_updated_at else ())
    return {key: _value(record, key) for key in keys}


class EventOptions:
    """What the caller sees of each event.

    The traceback, the host, the hostId (of the server's project) and the
    details.
    """

    def __init__(self, traceback=False, host=False, host_id_of=None,
                 details=False):
        self.traceback = traceback
        self.host = host
        self.host_id_of = host_id_of
        self.details = details


def event(record, options):
    view = {key: _value(record, key)
            for key in ('event', 'start_time', 'finish_time', 'result')}
    if options.traceback:
        view['traceback'] = record.traceback
    if options.host:
        view['host'] = record.host
    if options.host_id_of is not None:
        view['hostId'] = server_views.host_id(options.host_id_of,
                                              record.host)
    if options.details:
        view['details'] = record.details
    return view
