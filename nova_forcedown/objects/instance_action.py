"""Instance actions: the history of what was asked of a server.

Read-only records (``db.instance_actions.ActionRow`` and ``EventRow``)
for the API's views; the compute agent records the events of what it
carries out.
"""

from nova_forcedown.db import instance_actions as db_instance_actions
from nova_forcedown import exception

SUCCESS = db_instance_actions.SUCCESS
ERROR = db_instance_actions.ERROR


def get_all(context, instance_uuid, limit=None, marker=None,
            changes_since=None, changes_before=None):
    """The server's actions, newest first."""
    return db_instance_actions.actions_get(
        context, instance_uuid, limit=limit, marker=marker,
        changes_since=changes_since, changes_before=changes_before)


def get_by_request_id(context, instance_uuid, request_id):
    """The server's action of that request (404 when there is none)."""
    action = db_instance_actions.action_get_by_request_id(
        context, instance_uuid, request_id)
    if action is None:
        raise exception.InstanceActionNotFound(request_id=request_id)
    return action


def events(context, action_id):
    return db_instance_actions.events_get(context, action_id)


def latest(context, instance_uuid, action):
    """The newest ``action`` of the server, or None: the one a task runs."""
    return db_instance_actions.action_latest(context, instance_uuid, action)


def event_start(context, action_id, event, host):
    return db_instance_actions.event_start(context, action_id, event, host)


def event_finish(context, action_id, event_id, result, traceback=None):
    db_instance_actions.event_finish(context, action_id, event_id, result,
                                     traceback)
