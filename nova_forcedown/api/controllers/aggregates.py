"""os-aggregates: host aggregates, and the zones they make, as in Nova.

The zone rules (one zone per host, no empty zone name, no zone change
under a host's instances) are those of objects/aggregate.py; the handlers
validate, authorize, read the id and map what Nova maps differently.
Every handler of one aggregate goes: body schema, policy, integer id,
operation.
"""

import webob.exc

from nova_forcedown.api import integers
from nova_forcedown.api import microversion
from nova_forcedown.api import request as api_request
from nova_forcedown.api.schemas import aggregates as schemas
from nova_forcedown.api import validation
from nova_forcedown.api.views import aggregates as views
from nova_forcedown import exception
from nova_forcedown.objects import aggregate as aggregate_obj
from nova_forcedown.policies import aggregates as policies

AZ_KEY = aggregate_obj.AZ_KEY


def list_aggregates(req):
    validation.query(req, _query_schema(req.version))
    req.context.can(policies.INDEX)
    aggregates = aggregate_obj.get_all(req.context)
    return api_request.listing_response(
        'aggregates', aggregates,
        lambda aggregate: views.aggregate(aggregate, req.version))


def create_aggregate(req):
    body = validation.body(req, (schemas.CREATE_V20 if req.legacy_v2
                                 else schemas.CREATE))
    req.context.can(policies.CREATE)
    fields = body['aggregate']
    aggregate = aggregate_obj.create(
        req.context, _stripped(fields['name']),
        availability_zone=_stripped(fields.get(AZ_KEY)))
    return api_request.json_response(
        {'aggregate': views.created(aggregate, req.version)})


def show_aggregate(req):
    validation.query(req, _query_schema(req.version))
    req.context.can(policies.SHOW)
    return _respond(req, aggregate_obj.get_by_id(req.context,
                                                 _aggregate_id(req)))


def update_aggregate(req):
    body = validation.body(req, (schemas.UPDATE_V20 if req.legacy_v2
                                 else schemas.UPDATE))
    req.context.can(policies.UPDATE)
    aggregate = aggregate_obj.get_by_id(req.context, _aggregate_id(req))
    changes = body['aggregate']
    zone = ({AZ_KEY: _stripped(changes[AZ_KEY])} if AZ_KEY in changes
            else {})
    return _respond(req, aggregate_obj.update(
        req.context, aggregate, name=_stripped(changes.get('name')),
        conf=req.app.conf, **zone))


def delete_aggregate(req):
    req.context.can(policies.DELETE)
    aggregate_obj.destroy(req.context, aggregate_obj.get_by_id(
        req.context, _aggregate_id(req)))
    return api_request.empty_response(status=200)


def aggregate_action(req):
    """POST /os-aggregates/{id}/action: the body's one key is the action."""
    document = validation.json_body(req)
    name = validation.action_name(document, _ACTIONS)
    schema, rule, action = _ACTIONS[name]
    body = validation.validate_body(req, document, schema)
    req.context.can(rule)
    return _respond(req, action(req, _aggregate_id(req), body[name]))


@microversion.added_in(microversion.V2_81)
def cache_images(req):
    """Nova validates the request, then looks each image up.

    No image service answers here, so no image can be found: the answer
    is Nova's for an image its image service does not know, never a 202
    for caching that nothing would do.
    """
    body = validation.body(req, schemas.CACHE_IMAGES_V281)
    req.context.can(policies.IMAGES)
    aggregate_id = _aggregate_id(req)
    image_ids = [image['id'] for image in body['cache']]
    if len(set(image_ids)) != len(image_ids):
        raise webob.exc.HTTPBadRequest(
            explanation='Duplicate images in request')
    aggregate_obj.get_by_id(req.context, aggregate_id)
    raise webob.exc.HTTPBadRequest(
        explanation='Image %s could not be found.' % image_ids[0])


ROUTES = {
    '/os-aggregates': {'GET': list_aggregates, 'POST': create_aggregate},
    '/os-aggregates/{id}': {'GET': show_aggregate, 'PUT': update_aggregate,
                            'DELETE': delete_aggregate},
    '/os-aggregates/{id}/action': {'POST': aggregate_action},
    '/os-aggregates/{id}/images': {'POST': cache_images},
}


# ---------------------------------------------------------------- actions

def _add_host(req, aggregate_id, args):
    return aggregate_obj.add_host_to(req.context, aggregate_id,
                                     args['host'], conf=req.app.conf)


def _remove_host(req, aggregate_id, args):
    """Nothing to remove is one 404 for Nova, whatever is missing."""
    host = args['host']
    try:
        return aggregate_obj.remove_host_from(req.context, aggregate_id,
                                              host, conf=req.app.conf)
    except (exception.ComputeHostNotFound, exception.AggregateNotFound,
            exception.AggregateHostNotFound):
        raise webob.exc.HTTPNotFound(
            explanation='Cannot remove host %s in aggregate %s'
                        % (host, aggregate_id))


def _set_metadata(req, aggregate_id, args):
    aggregate = aggregate_obj.get_by_id(req.context, aggregate_id)
    return aggregate_obj.set_metadata(req.context, aggregate,
                                      args['metadata'], conf=req.app.conf)


# action name -> (body schema, policy rule, operation)
_ACTIONS = {
    'add_host': (schemas.ADD_HOST, policies.ADD_HOST, _add_host),
    'remove_host': (schemas.REMOVE_HOST, policies.REMOVE_HOST,
                    _remove_host),
    'set_metadata': (schemas.SET_METADATA, policies.SET_METADATA,
                     _set_metadata),
}


# ---------------------------------------------------------------- helpers

def _query_schema(version):
    return (schemas.QUERY_V2102 if version.matches(microversion.V2_102)
            else schemas.QUERY)


def _aggregate_id(req):
    """The integer id of the path, as Nova reads it (``int()``).

    An integer no aggregate can have (negative, beyond the column, of any
    number of digits) is an aggregate that does not exist.
    """
    text = req.urlvars['id']
    value = integers.read(text)
    if value is None:
        raise webob.exc.HTTPBadRequest(
            explanation='Invalid input received: id must be an integer')
    if not 0 <= value < integers.BOUND:
        raise exception.AggregateNotFound(aggregate_id=text)
    return value


def _stripped(text):
    """A name without the spaces around it, as Nova stores names."""
    return text.strip() if isinstance(text, str) else text


def _respond(req, aggregate):
    return api_request.json_response(
        {'aggregate': views.aggregate(aggregate, req.version)})
