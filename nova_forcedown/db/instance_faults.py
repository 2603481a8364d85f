"""Query functions for instance faults: insert one, read the newest.

Rows are read as named tuples. A fault is recorded in the transaction
that puts its server in error (or ends its failed task).
"""

import collections

import sqlalchemy as sa

from nova_forcedown.db import engine
from nova_forcedown.db import models

_FAULTS = models.InstanceFault.__table__

FaultRow = collections.namedtuple(
    'FaultRow', ('instance_uuid', 'code', 'message', 'details', 'host',
                 'created_at'))

# Most servers one statement names.
_UUIDS_IN_QUERY = 500


@engine.writer
def fault_create(context, values, now):
    """Insert a fault of ``values`` (instance_uuid, code, message, ...)."""
    context.connection.execute(
        _FAULTS.insert(), dict(values, created_at=now, deleted=0))


@engine.reader
def faults_latest(context, instance_uuids):
    """{uuid: FaultRow}: the newest fault of each server that has one."""
    uuids = sorted(set(instance_uuids))
    latest = {}
    for first in range(0, len(uuids), _UUIDS_IN_QUERY):
        rows = context.connection.execute(
            sa.select(*(_FAULTS.c[name] for name in FaultRow._fields))
            .where(_FAULTS.c.instance_uuid.in_(
                uuids[first:first + _UUIDS_IN_QUERY]),
                _FAULTS.c.deleted == 0)
            .order_by(_FAULTS.c.instance_uuid, _FAULTS.c.created_at.desc(),
                      _FAULTS.c.id.desc()))
        for row in rows:
            latest.setdefault(row.instance_uuid, FaultRow._make(row))
    return latest
