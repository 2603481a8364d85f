"""Legacy extension listing: ``/extensions`` and ``/extensions/{alias}``."""

import webob.exc

from nova_forcedown.api import request as api_request
from nova_forcedown.policies import extensions as policies


def _view(descriptor):
    return dict(descriptor, links=[])


def list_extensions(req):
    req.context.can(policies.LIST)
    return api_request.json_response(
        {'extensions': [_view(ext) for ext in req.app.extensions]})


def show_extension(req):
    req.context.can(policies.LIST)
    alias = req.urlvars['alias']
    for descriptor in req.app.extensions:
        if descriptor['alias'] == alias:
            return api_request.json_response({'extension': _view(descriptor)})
    raise webob.exc.HTTPNotFound(explanation=(
        'Extension %s could not be found.' % alias))


ROUTES = {
    '/extensions': {'GET': list_extensions},
    '/extensions/{alias}': {'GET': show_extension},
}
