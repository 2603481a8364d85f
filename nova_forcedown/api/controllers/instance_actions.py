"""GET /servers/{id}/os-instance-actions[/{request_id}], as in Nova.

The server is looked up first (from 2.21 a deleted one too), then the
policy is checked against its project. The list is newest first, paged
from 2.58; an action shows its events to admins always and to every
reader from 2.51, the traceback and (from 2.62) the host to admins only,
the hostId from 2.62 to all, the details from 2.84 to admins.
"""

from nova_forcedown.api import microversion
from nova_forcedown.api import request as api_request
from nova_forcedown.api.schemas import instance_actions as schemas
from nova_forcedown.api import validation
from nova_forcedown.api.views import instance_actions as views
from nova_forcedown.objects import instance as instance_obj
from nova_forcedown.objects import instance_action
from nova_forcedown.policies import instance_actions as policies


def list_actions(req):
    params = validation.query(req, _index_schema(req.version))
    server = _authorized(req, policies.LIST)
    paged = req.version.matches(microversion.V2_58)
    if not paged:
        actions = instance_action.get_all(req.context, server.uuid)
        return _listing(actions, paged)
    last = validation.last_values(params)
    since, before = validation.changes_window(last)
    limit = req.page_size(last.get('limit'))
    actions = instance_action.get_all(
        req.context, server.uuid, limit=limit, marker=last.get('marker'),
        changes_since=since, changes_before=before)
    links = req.next_links(actions, limit, lambda action: action.request_id)
    return _listing(actions, paged, {'links': links} if links else None)


def show_action(req):
    server = _authorized(req, policies.SHOW)
    context = req.context
    action = instance_action.get_by_request_id(
        context, server.uuid, req.urlvars['request_id'])
    view = views.action(action, req.version.matches(microversion.V2_58))
    options = _event_options(req, server)
    if options is not None:
        view['events'] = [views.event(event, options) for event in
                          instance_action.events(context, action.id)]
    return api_request.json_response({'instanceAction': view})


ROUTES = {
    '/servers/{id}/os-instance-actions': {'GET': list_actions},
    '/servers/{id}/os-instance-actions/{request_id}': {'GET': show_action},
}


def _index_schema(version):
    if version.matches(microversion.V2_66):
        return schemas.INDEX_QUERY_V266
    if version.matches(microversion.V2_58):
        return schemas.INDEX_QUERY_V258
    return schemas.INDEX_QUERY


def _authorized(req, rule):
    """The server of the path, once ``rule`` allows reading its actions."""
    server = instance_obj.get_record(
        req.context, req.urlvars['id'], project_id=req.visible_project,
        deleted_too=req.version.matches(microversion.V2_21))
    req.context.can(rule, {'project_id': server.project_id})
    return server


def _event_options(req, server):
    """What the caller sees of the events; None: no events at all."""
    context, version = req.context, req.version
    target = {'project_id': server.project_id}
    everything = context.can(policies.EVENTS, target, fatal=False)
    if not everything and not version.matches(microversion.V2_51):
        return None
    with_host_id = version.matches(microversion.V2_62)
    return views.EventOptions(
        traceback=everything, host=everything and with_host_id,
        host_id_of=server.project_id if with_host_id else None,
        details=(version.matches(microversion.V2_84) and
                 context.can(policies.EVENTS_DETAILS, target, fatal=False)))


def _listing(actions, with_updated_at, extra=None):
    return api_request.listing_response(
        'instanceActions', actions,
        lambda record: views.action(record, with_updated_at), extra)
