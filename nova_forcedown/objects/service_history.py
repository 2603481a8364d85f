"""The history of a host's service: who changed what, when, by which
request.

Read-only records (``db.service_history.HistoryRow``) for the API's view
and the manage command. Changes are recorded where they are made, in
their transaction (``db.service_history.history_record``).
"""

from nova_forcedown.db import engine as db_engine
from nova_forcedown.db import service_history as db_service_history

COMPUTE_BINARY = 'nova-compute'

Change = db_service_history.Change


def get_for_host(context, host, binary=COMPUTE_BINARY, limit=None,
                 marker=None):
    """The history of ``binary`` on ``host``, newest first, paged."""
    return db_service_history.history_get(context, host, binary=binary,
                                          limit=limit, marker=marker)


@db_engine.writer
def record(context, host, event, changes):
    """Record ``event`` on ``host``: a change made outside the database.

    Such as a fence, whose power-off the BMC made. ``changes``: a list of
    :class:`Change`.
    """
    db_service_history.history_record(context, host, event, changes)


def latest_of(context, host, events, scan=50):
    """The newest entry of ``host`` naming one of ``events``, or None.

    Among its last ``scan`` entries.
    """
    for entry in get_for_host(context, host, limit=scan):
        if set(entry.event.split(',')) & set(events):
            return entry
    return None


def changes(entry):
    """The :class:`Change` list of a history entry."""
    return db_service_history.changes_of(entry)
