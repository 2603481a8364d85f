"""POST /servers/{id}/action: the actions instance-HA tools send.

``lock``, ``unlock``, ``os-resetState``, ``os-stop``, ``os-start``,
``evacuate`` and ``forceDelete``, as in Nova: the body's one key names
the action, its value is validated, then the server is looked up (404,
also for another project's server unless the caller is an admin), the
policy is checked against the server's project, and the operation runs
(409 when the server's state refuses it). Each answers 202 with no
body, but evacuate, 200; stop, start, evacuate and a forceDelete of a
server on an up host are then carried out by the hosts' agents.
"""

import secrets

import webob.exc

from nova_forcedown.api import microversion
from nova_forcedown.api import request as api_request
from nova_forcedown.api.controllers import server_lifecycle
from nova_forcedown.api.controllers import servers
from nova_forcedown.api.schemas import server_actions as schemas
from nova_forcedown.api import validation
from nova_forcedown import exception
from nova_forcedown.objects import evacuation
from nova_forcedown.objects import instance as instance_obj
from nova_forcedown.objects import instance_operations as operations
from nova_forcedown.policies import server_actions as policies
from nova_forcedown.scheduler import host_selection


def server_action(req):
    document = validation.json_body(req)
    name = validation.action_name(document, _ACTIONS)
    schema, handler = _ACTIONS[name]
    if callable(schema):
        schema = schema(req.version)
    body = validation.validate_body(req, document, schema)
    return handler(req, body[name]) or api_request.empty_response(status=202)


ROUTES = {
    '/servers/{id}/action': {'POST': server_action},
}


def _lock(req, args):
    server = servers.authorized(req, policies.LOCK)
    reason = None
    if req.version.matches(microversion.V2_73) and args:
        reason = args.get('locked_reason')
    operations.lock(req.context, server.uuid, reason=reason,
                    project_id=req.visible_project)


def _unlock(req, args):
    server = servers.authorized(req, policies.UNLOCK)
    if not operations.holds_lock_as_expected(req.context, server):
        req.context.can(policies.UNLOCK_OVERRIDE,
                        {'project_id': server.project_id})
    operations.unlock(req.context, server.uuid,
                      project_id=req.visible_project)


def _reset_state(req, args):
    server = servers.authorized(req, policies.RESET_STATE)
    operations.reset_state(req.context, server.uuid, args['state'],
                           project_id=req.visible_project)


def _stop(req, args):
    server = _mapped(req, policies.STOP)
    operations.stop(req.context, server.uuid, project_id=req.visible_project)


def _start(req, args):
    server = _mapped(req, policies.START)
    operations.start(req.context, server.uuid, project_id=req.visible_project)


def _mapped(req, rule):
    """The server of a stop or start, as Nova's servers controller finds it.

    Nova looks up the server's cell mapping first: a server it never
    knew is "Instance <id> has no mapping to a cell."; one it knew
    (deleted, another project's) is "could not be found".
    """
    try:
        return servers.authorized(req, rule)
    except exception.InstanceNotFound:
        uuid = req.urlvars['id']
        if not instance_obj.exists(req.context, uuid):
            raise exception.InstanceMappingNotFound(uuid=uuid)
        raise


def _evacuate(req, args):
    """Nova's evacuate; its answer, 200, with adminPass before 2.14."""
    version = req.version
    server = servers.authorized(req, policies.EVACUATE)
    host = args.get('host')
    force = (validation.to_bool(args['force']) if 'force' in args
             else False)
    if force and host is None:
        raise webob.exc.HTTPBadRequest(
            explanation="Can't force to a non-provided destination")
    shared = validation.to_bool(args.get('onSharedStorage', False))
    password = args.get('adminPass')
    if shared and password is not None:
        raise webob.exc.HTTPBadRequest(
            explanation="admin password can't be changed on existing disk")
    force = host is not None and (force or not version.matches(
        microversion.V2_29))
    plan = host_selection.evacuation_plan(
        req.context, req.app.conf, req.app.servicegroup, server, host, force)
    evacuation.evacuate(req.context, plan, server, host=host, force=force,
                        stop_after=version.matches(microversion.V2_95),
                        project_id=req.visible_project)
    if version.matches(microversion.V2_14):
        return api_request.empty_response(status=200)
    if not req.app.conf.api.enable_instance_password:
        return api_request.json_response({})
    if password is None and not shared:
        password = secrets.token_urlsafe(9)
    return api_request.json_response({'adminPass': password})


def _force_delete(req, args):
    """Nova's forceDelete: a delete, refused while a task runs."""
    server = servers.authorized(req, policies.FORCE_DELETE)
    server_lifecycle.delete(req, server, force=True)


def _evacuate_schema(version):
    if version.matches(microversion.V2_68):
        return schemas.EVACUATE_V268
    if version.matches(microversion.V2_29):
        return schemas.EVACUATE_V229
    if version.matches(microversion.V2_14):
        return schemas.EVACUATE_V214
    return schemas.EVACUATE


def _lock_schema(version):
    return (schemas.LOCK_V273 if version.matches(microversion.V2_73)
            else schemas.ANYTHING)


# action -> (body schema, or a function of the microversion that gives
# it; handler)
_ACTIONS = {
    'lock': (_lock_schema, _lock),
    'unlock': (schemas.ANYTHING, _unlock),
    'os-resetState': (schemas.RESET_STATE, _reset_state),
    'os-stop': (schemas.ANYTHING, _stop),
    'os-start': (schemas.ANYTHING, _start),
    'evacuate': (_evacuate_schema, _evacuate),
    'forceDelete': (schemas.ANYTHING, _force_delete),
}
