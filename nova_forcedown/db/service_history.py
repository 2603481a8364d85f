"""Query functions for the history of a host's service: the audit trail.

A change is recorded by :func:`history_record`, joining the transaction
of the operation that makes it, so the change and its record commit
together or not at all; the operations name their events
(:mod:`nova_forcedown.objects.service`, ``.evacuation``,
``.host_operations``). Rows are read as :class:`HistoryRow` named
tuples, newest first.
"""

import collections

from oslo_serialization import jsonutils
from oslo_utils import timeutils
import sqlalchemy as sa

from nova_forcedown.db import engine
from nova_forcedown.db import models
from nova_forcedown import exception

_HISTORY = models.ServiceHistory.__table__

HistoryRow = collections.namedtuple('HistoryRow',
                                    tuple(_HISTORY.columns.keys()))

# One change of a history entry: a field, its value before and after.
Change = collections.namedtuple('Change', ('field', 'old', 'new'))


@engine.writer
def history_record(context, host, event, changes,
                   binary=models.COMPUTE_BINARY, service_uuid=None,
                   now=None):
    """Record ``event`` of ``context``'s request on ``host``; its id.

    ``changes`` is a list of :class:`Change` (JSON-able values). Call it
    in the transaction that makes the change, which it joins.
    """
    now = now or timeutils.utcnow()
    result = context.connection.execute(_HISTORY.insert(), dict(
        host=host, binary=binary, service_uuid=service_uuid, event=event,
        changes=jsonutils.dumps([change._asdict() for change in changes]),
        user_id=context.user_id, project_id=context.project_id,
        request_id=context.request_id, created_at=now))
    return result.inserted_primary_key[0]


def changes_of(row):
    """The :class:`Change` list of a :class:`HistoryRow`."""
    return [Change(**change) for change in jsonutils.loads(row.changes)]


@engine.reader
def history_get(context, host, binary=models.COMPUTE_BINARY, limit=None,
                marker=None):
    """The history of ``binary`` on ``host``, newest first.

    A page of at most ``limit`` entries after the entry whose id is
    ``marker``; a marker that is no entry of this history is
    :class:`exception.MarkerNotFound`. One statement, two with a marker.
    """
    connection = context.connection
    criteria = [_HISTORY.c.host == host, _HISTORY.c.binary == binary]
    if marker is not None:
        found = connection.execute(sa.select(_HISTORY.c.id).where(
            _HISTORY.c.id == marker, *criteria)).first()
        if found is None:
            raise exception.MarkerNotFound(marker=marker)
        criteria.append(_HISTORY.c.id < marker)
    query = (sa.select(_HISTORY).where(*criteria)
             .order_by(_HISTORY.c.id.desc()))
    if limit is not None:
        query = query.limit(limit)
    return [HistoryRow._make(row) for row in connection.execute(query)]
