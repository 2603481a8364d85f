"""The history of a host's service: who changed what, when, by which
request.

Read-only records (``db.service_history.HistoryRow``) for the API's view
and the manage command. Changes are recorded where they are made, in
their transaction (``db.service_history.history_record``).
"""

from nova_forcedown.db import service_history as db_service_history

COMPUTE_BINARY = 'nova-compute'

Change = db_service_history.Change


def get_for_host(context, host, binary=COMPUTE_BINARY, limit=None,
                 marker=None):
    """The history of ``binary`` on ``host``, newest first, paged."""
    return db_service_history.history_get(context, host, binary=binary,
                                          limit=limit, marker=marker)


def changes(entry):
    """The :class:`Change` list of a history entry."""
    return db_service_history.changes_of(entry)
