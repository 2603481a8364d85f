"""Query functions for instance actions and their events.

An action is recorded in the transaction that changes its server
(:func:`nova_forcedown.objects.instance_operations.act` calls
:func:`record_action`, joining its transaction); the compute agent adds the
events of what it carried out. Rows are read as named tuples.
"""

import collections

from oslo_utils import timeutils
import sqlalchemy as sa

from nova_forcedown.db import engine
from nova_forcedown.db import models
from nova_forcedown import exception

_ACTIONS = models.InstanceAction.__table__
_EVENTS = models.InstanceActionEvent.__table__

ActionRow = collections.namedtuple('ActionRow',
                                   tuple(_ACTIONS.columns.keys()))
EventRow = collections.namedtuple('EventRow', tuple(_EVENTS.columns.keys()))

# What an event's result and a failed action's message say, as in Nova.
SUCCESS = 'Success'
ERROR = 'Error'


@engine.writer
def record_action(context, instance_uuid, action, now):
    """Insert the action ``action`` of ``context``'s request; its id."""
    result = context.connection.execute(_ACTIONS.insert(), dict(
        action=action, instance_uuid=instance_uuid,
        request_id=context.request_id, user_id=context.user_id,
        project_id=context.project_id, start_time=now, created_at=now,
        updated_at=now, deleted=0))
    return result.inserted_primary_key[0]


@engine.writer
def record_actions(context, instance_uuids, action, now):
    """Insert the action ``action`` of ``context``'s request for each server.

    One multi-row INSERT: a host-wide operation records one action per
    server it changed.
    """
    if not instance_uuids:
        return
    context.connection.execute(_ACTIONS.insert(), [
        {'action': action, 'instance_uuid': uuid,
         'request_id': context.request_id, 'user_id': context.user_id,
         'project_id': context.project_id, 'start_time': now,
         'created_at': now, 'updated_at': now, 'deleted': 0}
        for uuid in instance_uuids])


@engine.reader
def action_latest(context, instance_uuid, action):
    """The newest ``action`` recorded for the server, or None."""
    row = context.connection.execute(
        sa.select(_ACTIONS).where(_ACTIONS.c.instance_uuid == instance_uuid,
                                  _ACTIONS.c.action == action,
                                  _ACTIONS.c.deleted == 0)
        .order_by(_ACTIONS.c.id.desc()).limit(1)).first()
    return None if row is None else ActionRow._make(row)


@engine.writer
def event_start(context, action_id, event, host):
    """Record that ``host`` started ``event`` of the action; its id."""
    now = timeutils.utcnow()
    result = context.connection.execute(_EVENTS.insert().values(
        action_id=action_id, event=event, host=host, start_time=now,
        created_at=now, deleted=0))
    return result.inserted_primary_key[0]


@engine.writer
def event_finish(context, action_id, event_id, result, traceback=None):
    """Record the end of an event and of its action.

    A failed event marks its action's message ``Error``, as Nova does.
    """
    now = timeutils.utcnow()
    connection = context.connection
    connection.execute(_EVENTS.update().where(_EVENTS.c.id == event_id)
                       .values(finish_time=now, result=result,
                               traceback=traceback, updated_at=now))
    values = {'finish_time': now, 'updated_at': now}
    if result == ERROR:
        values['message'] = ERROR
    connection.execute(_ACTIONS.update().where(_ACTIONS.c.id == action_id)
                       .values(**values))


def _changed():
    return sa.func.coalesce(_ACTIONS.c.updated_at, _ACTIONS.c.created_at)


@engine.reader
def actions_get(context, instance_uuid, limit=None, marker=None,
                changes_since=None, changes_before=None):
    """The server's actions, newest first, a page after ``marker``.

    ``marker`` is the request id of an action of this server; an unknown
    one is :class:`exception.MarkerNotFound`.
    """
    connection = context.connection
    criteria = [_ACTIONS.c.instance_uuid == instance_uuid,
                _ACTIONS.c.deleted == 0]
    if changes_since is not None:
        criteria.append(_changed() >= changes_since)
    if changes_before is not None:
        criteria.append(_changed() <= changes_before)
    if marker is not None:
        row = connection.execute(sa.select(_ACTIONS.c.created_at,
                                           _ACTIONS.c.id).where(
            _ACTIONS.c.instance_uuid == instance_uuid,
            _ACTIONS.c.request_id == marker)).first()
        if row is None:
            raise exception.MarkerNotFound(marker=marker)
        criteria.append(sa.or_(
            _ACTIONS.c.created_at < row.created_at,
            sa.and_(_ACTIONS.c.created_at == row.created_at,
                    _ACTIONS.c.id < row.id)))
    query = (sa.select(_ACTIONS).where(*criteria)
             .order_by(_ACTIONS.c.created_at.desc(), _ACTIONS.c.id.desc()))
    if limit is not None:
        query = query.limit(limit)
    return [ActionRow._make(row) for row in connection.execute(query)]


@engine.reader
def action_get_by_request_id(context, instance_uuid, request_id):
    """The server's action of request ``request_id``, or None."""
    row = context.connection.execute(
        sa.select(_ACTIONS).where(_ACTIONS.c.instance_uuid == instance_uuid,
                                  _ACTIONS.c.request_id == request_id,
                                  _ACTIONS.c.deleted == 0)
        .order_by(_ACTIONS.c.id.desc()).limit(1)).first()
    return None if row is None else ActionRow._make(row)


@engine.reader
def events_get(context, action_id):
    """The events of an action, oldest first."""
    return [EventRow._make(row) for row in context.connection.execute(
        sa.select(_EVENTS).where(_EVENTS.c.action_id == action_id,
                                 _EVENTS.c.deleted == 0)
        .order_by(_EVENTS.c.id))]
