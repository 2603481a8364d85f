"""os-extra_specs of a flavor: list and show for project readers, create,
update and delete for admins, as in Nova.

Writes echo the body as it was sent (a number stays a number), while the
database keeps every value as a string. Handlers go: body schema, policy,
value checks (from 2.86 against the specs Nova knows), flavor lookup,
operation.
"""

import webob.exc

from nova_forcedown.api import extra_specs
from nova_forcedown.api import microversion
from nova_forcedown.api import request as api_request
from nova_forcedown.api.schemas import flavors as schemas
from nova_forcedown.api import validation
from nova_forcedown import exception
from nova_forcedown.objects import flavor as flavor_obj
from nova_forcedown.policies import flavor_extra_specs as policies

MAX_VALUE_LENGTH = 255
KNOWN_SPECS = extra_specs.load()


def list_extra_specs(req):
    _authorize(req, policies.INDEX)
    flavor = flavor_obj.get_by_flavor_id(req.context,
                                         req.urlvars['flavor_id'])
    return api_request.json_response({'extra_specs': flavor.extra_specs})


def show_extra_spec(req):
    _authorize(req, policies.SHOW)
    flavor = flavor_obj.get_by_flavor_id(req.context,
                                         req.urlvars['flavor_id'])
    key = req.urlvars['key']
    if key not in flavor.extra_specs:
        raise exception.FlavorExtraSpecsNotFound(
            flavor_id=flavor.flavorid, extra_specs_key=key)
    return api_request.json_response({key: flavor.extra_specs[key]})


def create_extra_specs(req):
    body = validation.body(req, schemas.EXTRA_SPECS_CREATE)
    _authorize(req, policies.CREATE)
    _set(req, body['extra_specs'])
    return api_request.json_response(body)


def update_extra_spec(req):
    body = validation.body(req, schemas.EXTRA_SPEC_UPDATE)
    _authorize(req, policies.UPDATE)
    if req.urlvars['key'] not in body:
        raise webob.exc.HTTPBadRequest(
            explanation='Request body and URI mismatch')
    _set(req, body)
    return api_request.json_response(body)


def delete_extra_spec(req):
    _authorize(req, policies.DELETE)
    flavor = flavor_obj.get_by_flavor_id(req.context,
                                         req.urlvars['flavor_id'])
    flavor_obj.delete_extra_spec(req.context, flavor.flavorid,
                                 req.urlvars['key'])
    return api_request.empty_response(status=200)


_SPECS = '/flavors/{flavor_id}/os-extra_specs'
ROUTES = {
    _SPECS: {'GET': list_extra_specs, 'POST': create_extra_specs},
    _SPECS + '/{key}': {'GET': show_extra_spec, 'PUT': update_extra_spec,
                        'DELETE': delete_extra_spec},
}


def _authorize(req, rule):
    """Nova checks these rules against the caller's own project."""
    req.context.can(rule, {'project_id': req.context.project_id})


def _set(req, specs):
    """Store ``specs`` as strings, once their values pass Nova's checks."""
    validated = req.version.matches(microversion.V2_86)
    values = {}
    for key, value in specs.items():
        values[key] = _text(value)
        if validated:
            KNOWN_SPECS.validate(key, values[key])
    flavor = flavor_obj.get_by_flavor_id(req.context,
                                         req.urlvars['flavor_id'])
    flavor_obj.set_extra_specs(req.context, flavor.flavorid, values)


def _text(value):
    """A value as stored; a number's text has the length of any string."""
    if isinstance(value, str):
        return value
    text = str(value)
    if len(text) > MAX_VALUE_LENGTH:
        raise webob.exc.HTTPBadRequest(
            explanation='Invalid input received: extra_specs value has more '
                        'than %d characters.' % MAX_VALUE_LENGTH)
    return text
