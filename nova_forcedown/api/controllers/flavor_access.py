"""os-flavor-access: who may use a private flavor, as in Nova.

An admin lists the projects a private flavor is shared with, and shares
it with a project (``addTenantAccess``) or stops (``removeTenantAccess``)
through POST /flavors/{id}/action. A public flavor has no list (404);
from 2.7 it cannot be shared either (409). Each answers with the flavor's
access list as it now is. Handlers go: body, policy, flavor, change.
"""

import webob.exc

from nova_forcedown.api import microversion
from nova_forcedown.api import request as api_request
from nova_forcedown.api.schemas import flavors as schemas
from nova_forcedown.api import validation
from nova_forcedown.objects import flavor as flavor_obj
from nova_forcedown.policies import flavor_access as policies


def list_flavor_access(req):
    _authorize(req, policies.LIST)
    flavor = flavor_obj.get_by_flavor_id(req.context, req.urlvars['id'])
    if flavor.is_public:
        raise webob.exc.HTTPNotFound(
            explanation='Access list not available for public flavors.')
    return _access_list(flavor, flavor_obj.projects(req.context,
                                                    flavor.flavorid))


def flavor_action(req):
    document = validation.json_body(req)
    name = validation.action_name(document, _ACTIONS)
    schema, handler = _ACTIONS[name]
    body = validation.validate_body(req, document, schema)
    return handler(req, body[name]['tenant'])


ROUTES = {
    '/flavors/{id}/os-flavor-access': {'GET': list_flavor_access},
    '/flavors/{id}/action': {'POST': flavor_action},
}


def _add_tenant_access(req, project_id):
    _authorize(req, policies.ADD)
    flavor = flavor_obj.get_by_flavor_id(req.context, req.urlvars['id'])
    if flavor.is_public and req.version.matches(microversion.V2_7):
        raise webob.exc.HTTPConflict(
            explanation='Can not add access to a public flavor.')
    return _access_list(flavor, flavor_obj.add_access(
        req.context, flavor.flavorid, project_id))


def _remove_tenant_access(req, project_id):
    _authorize(req, policies.REMOVE)
    flavor = flavor_obj.get_by_flavor_id(req.context, req.urlvars['id'])
    return _access_list(flavor, flavor_obj.remove_access(
        req.context, flavor.flavorid, project_id))


# action -> (body schema, handler of the project id it names)
_ACTIONS = {
    'addTenantAccess': (schemas.ADD_TENANT_ACCESS, _add_tenant_access),
    'removeTenantAccess': (schemas.REMOVE_TENANT_ACCESS,
                           _remove_tenant_access),
}


def _authorize(req, rule):
    """Nova checks these rules with no target but the caller's project."""
    req.context.can(rule, {'project_id': req.context.project_id})


def _access_list(flavor, projects):
    return api_request.json_response({'flavor_access': [
        {'flavor_id': flavor.flavorid, 'tenant_id': project_id}
        for project_id in projects]})
