"""os-services: list, enable/disable, force-down, update by UUID, delete.

From 2.53, also ``GET /os-services/{uuid}``, which Nova does not have: the
service as the update by UUID answers it, with its entity tag (``ETag``),
which that update takes in ``If-Match`` to refuse (412) a change decided
on a service that changed since. Below 2.53 (and on /v2) the path has no
GET, as before: the router's 405.
"""

import functools

from oslo_utils import uuidutils
import webob.exc

from nova_forcedown.api import microversion
from nova_forcedown.api import preconditions
from nova_forcedown.api import request as api_request
from nova_forcedown.api import router
from nova_forcedown.api.schemas import services as schemas
from nova_forcedown.api import validation
from nova_forcedown.api.views import services as views
from nova_forcedown import exception
from nova_forcedown.objects import service as service_obj
from nova_forcedown.policies import services as policies
from nova_forcedown.servicegroup import entity_tag
from nova_forcedown.servicegroup import status as service_status
from nova_forcedown.servicegroup import zones


def list_services(req):
    schema = (schemas.INDEX_QUERY_V275
              if req.version.matches(microversion.V2_75)
              else schemas.INDEX_QUERY)
    params = validation.query(req, schema)
    req.context.can(policies.LIST)
    host = validation.last(params, 'host') or None
    binary = validation.last(params, 'binary') or None
    if host:
        # One statement: the host's services beside its zones. A listing
        # of one host is what fence agents and monitors ask for most.
        services, host_zones = service_obj.ServiceList.get_records_of_host(
            req.context, host, binary=binary, include_api=False)
        return _listing(req, zones.ServiceZones.of_host(
            req.app.conf, host, host_zones), services)
    # Read-only rows rather than Service objects: a listing of thousands
    # of services spends its time building objects it never changes. They
    # are rendered as the cursor reads them, never all held at once.
    with service_obj.ServiceList.reading_records(
            req.context, binary=binary, include_api=False) as services:
        return _listing(req, zones.ServiceZones.load(
            req.context, req.app.conf), services)


def _listing(req, service_zones, services):
    view = views.Services(req.version, service_zones)
    is_up = req.is_up
    return api_request.listing_response(
        'services', services,
        lambda service: view.service(service, is_up(service)))


def show_service(req):
    """GET /os-services/{id}: from 2.53 only, by UUID, with its ETag."""
    if not req.version.matches(microversion.V2_53):
        raise router.method_not_allowed(req.method, [
            method for method in ROUTES['/os-services/{id}']
            if method != req.method])
    service_id = req.urlvars['id']
    _require_uuid(service_id)
    req.context.can(policies.LIST)
    return _service_response(req, service_obj.Service.get_compute_by_uuid(
        req.context, service_id))


def update_service(req):
    """PUT /os-services/{id}: an action name before 2.53, a UUID after."""
    if req.version.matches(microversion.V2_53):
        return _update_by_uuid(req)
    return _update_by_action(req)


def delete_service(req):
    req.context.can(policies.DELETE)
    service = _service_to_delete(req, req.urlvars['id'])
    service.destroy(conf=req.app.conf)
    return api_request.empty_response()


ROUTES = {
    '/os-services': {'GET': list_services},
    '/os-services/{id}': {'GET': show_service, 'PUT': update_service,
                          'DELETE': delete_service},
}


# -------------------------------------------- 2.1 - 2.52: host and binary

def _update_by_action(req):
    schema = (schemas.UPDATE_BY_ACTION_V211
              if req.version.matches(microversion.V2_11)
              else schemas.UPDATE_BY_ACTION)
    body = validation.body(req, schema)
    req.context.can(policies.UPDATE)
    actions = {'enable': _enable, 'disable': _disable,
               'disable-log-reason': _disable_log_reason}
    if req.version.matches(microversion.V2_11):
        actions['force-down'] = _force_down
    action = actions.get(req.urlvars['id'])
    if action is None:
        raise webob.exc.HTTPNotFound(explanation='Unknown action')
    return action(req, body)


def _enable(req, body):
    return _set_disabled(req, body, False)


def _disable(req, body):
    return _set_disabled(req, body, True)


def _disable_log_reason(req, body):
    reason = body.get('disabled_reason')
    if reason is None:
        raise webob.exc.HTTPBadRequest(
            explanation='Missing disabled reason field')
    return _set_disabled(req, body, True, reason)


def _set_disabled(req, body, disabled, reason=None):
    service = _update_compute_on_host(
        req, body['host'], body['binary'],
        {'disabled': disabled, 'disabled_reason': reason})
    return _action_response(body, status=service_status.status(service),
                            disabled_reason=reason)


def _force_down(req, body):
    if 'forced_down' not in body:
        raise webob.exc.HTTPBadRequest(
            explanation='Missing forced_down field')
    forced_down = validation.to_bool(body['forced_down'])
    _update_compute_on_host(req, body['host'], body['binary'],
                            {'forced_down': forced_down})
    return _action_response(body, forced_down=forced_down)


def _action_response(body, **fields):
    """The legacy actions echo the request, not the stored row."""
    view = {'host': body['host'], 'binary': body['binary']}
    view.update({key: value for key, value in fields.items()
                 if value is not None})
    return api_request.json_response({'service': view})


def _update_compute_on_host(req, host, binary, changes):
    """Write ``changes`` to the nova-compute service of ``host``."""
    if binary != service_obj.COMPUTE_BINARY:
        raise exception.ServiceNotCompute(binary=binary)
    return service_obj.Service.update_compute(
        req.context, changes, host=host, conf=req.app.conf)


# ---------------------------------------------------- 2.53 and later: UUID

def _update_by_uuid(req):
    body = validation.body(req, schemas.UPDATE_V253)
    service_id = req.urlvars['id']
    _require_uuid(service_id)
    req.context.can(policies.UPDATE)
    unchanged = _unchanged(req)
    try:
        changes = _changes(body)
    except webob.exc.HTTPBadRequest:
        # A missing or non-compute service is reported first, as in Nova.
        service_obj.Service.get_compute_by_uuid(req.context, service_id)
        raise
    return _service_response(req, service_obj.Service.update_compute(
        req.context, changes, uuid=service_id, conf=req.app.conf,
        unchanged=unchanged))


def _unchanged(req):
    """The condition of ``If-Match`` on the service, or None.

    None without the header, or with ``*``: the update already needs the
    service to exist. The tag is judged on the row the update locks.
    """
    tags = preconditions.if_match(req)
    if tags is None:
        return None
    return service_obj.Unchanged(tags, functools.partial(
        entity_tag.stored_tag, req.app.conf, req.is_up))


def _service_response(req, service):
    """The service view of 2.53 and later, with its ``ETag``."""
    service_zones = zones.ServiceZones.load(req.context, req.app.conf,
                                            hosts=[service.host])
    is_up = req.is_up(service)
    resp = api_request.json_response({'service': views.service(
        service, is_up, req.version, service_zones)})
    resp.headers['ETag'] = entity_tag.service_tag(
        service, is_up, service_zones.zone(service))
    return resp


def _changes(body):
    """The fields ``body`` asks to write: status and forced_down."""
    changes = {}
    if 'status' in body:
        reason = body.get('disabled_reason')
        if body['status'] == 'enabled':
            if reason:
                raise webob.exc.HTTPBadRequest(explanation=(
                    "Specifying 'disabled_reason' with status 'enabled' "
                    "is invalid."))
            changes.update(disabled=False, disabled_reason=None)
        else:
            changes.update(disabled=True, disabled_reason=reason)
    if 'forced_down' in body:
        changes['forced_down'] = validation.to_bool(body['forced_down'])
    if not changes:
        raise webob.exc.HTTPBadRequest(explanation=(
            "No updates were requested. Fields 'status' or 'forced_down' "
            "should be specified."))
    return changes


def _require_uuid(value):
    if not uuidutils.is_uuid_like(value):
        raise webob.exc.HTTPBadRequest(explanation='Invalid uuid %s' % value)


# ------------------------------------------------------------------ delete

def _service_to_delete(req, service_id):
    try:
        if req.version.matches(microversion.V2_53):
            _require_uuid(service_id)
            return service_obj.Service.get_by_uuid(req.context, service_id)
        if not service_id.isascii() or not service_id.isdigit():
            raise webob.exc.HTTPBadRequest(explanation=(
                'Invalid input received: id must be an integer'))
        integer_id = validation.db_integer(service_id)
        if integer_id is None:
            raise exception.ServiceNotFound(service_id=service_id)
        return service_obj.Service.get_by_id(req.context, integer_id)
    except exception.ServiceNotFound:
        raise webob.exc.HTTPNotFound(
            explanation='Service %s not found.' % service_id)
