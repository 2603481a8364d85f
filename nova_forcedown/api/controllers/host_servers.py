"""POST /os-host-servers/{host_name}/action: host-wide server operations.

Beyond Nova (the mark-host-down blueprint's future work): ``mark_shutdown``
marks every server of a fenced host powered off, ``os-resetState`` resets
the state of every server of the host. The body is validated (400), the
policy checked (403), then the host's nova-compute service looked up
(404) and the operation run, refused (409) while that service is up. The
answer (200) lists each server changed with its states before and after;
the change is complete when it is sent.
"""

from nova_forcedown.api import request as api_request
from nova_forcedown.api.schemas import host_servers as schemas
from nova_forcedown.api import validation
from nova_forcedown.api.views import host_servers as views
from nova_forcedown.objects import host_operations as operations
from nova_forcedown.policies import host_servers as policies


def host_servers_action(req):
    document = validation.json_body(req)
    name = validation.action_name(document, _ACTIONS)
    schema, rule, operation = _ACTIONS[name]
    body = validation.validate_body(req, document, schema)
    req.context.can(rule)
    changes = operation(req, req.urlvars['host_name'], body[name])
    return api_request.json_response(views.changes(changes))


ROUTES = {
    '/os-host-servers/{host_name}/action': {'POST': host_servers_action},
}


def _mark_shutdown(req, host, args):
    return operations.mark_shutdown(req.context, host, req.is_up)


def _reset_state(req, host, args):
    return operations.reset_state(req.context, host, args['state'],
                                  req.is_up)


# action -> (body schema, rule, operation)
_ACTIONS = {
    'mark_shutdown': (schemas.MARK_SHUTDOWN, policies.MARK_SHUTDOWN,
                      _mark_shutdown),
    'os-resetState': (schemas.RESET_STATE, policies.RESET_STATE,
                      _reset_state),
}
