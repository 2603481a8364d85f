"""Flavors: list, detail and show for everyone; create, update, delete for
admins (os-flavor-manage), as in Nova.

Who sees which flavor is the query's business (private flavors exist only
for the projects they are shared with, and for admins); the list handlers
turn Nova's query parameters into its filters. Writes go: body schema,
policy, operation.
"""

from oslo_utils import strutils
import webob.exc

from nova_forcedown.api import integers
from nova_forcedown.api import microversion
from nova_forcedown.api import request as api_request
from nova_forcedown.api.schemas import flavors as schemas
from nova_forcedown.api import validation
from nova_forcedown.api.views import flavors as views
from nova_forcedown.objects import base as objects_base
from nova_forcedown.objects import flavor as flavor_obj
from nova_forcedown.policies import flavor_extra_specs as spec_policies
from nova_forcedown.policies import flavor_manage as policies

# Nova's largest rxtx_factor: the largest single-precision float.
MAX_RXTX_FACTOR = 3.40282e+38


def list_flavors(req):
    flavors, extra = _listing(req)
    links = _links(req)
    return api_request.listing_response(
        'flavors', flavors,
        lambda flavor: views.brief(flavor, req.version, links), extra)


def list_flavors_detail(req):
    flavors, extra = _listing(req)
    links = _links(req)
    with_specs = _shows_extra_specs(req)
    return api_request.listing_response(
        'flavors', flavors,
        lambda flavor: views.detail(flavor, req.version, links, with_specs),
        extra)


def show_flavor(req):
    return _respond(req, flavor_obj.get_by_flavor_id(req.context,
                                                     req.urlvars['id']))


def create_flavor(req):
    body = validation.body(req, _create_schema(req.version))
    fields = body['flavor']
    flavorid = _flavor_id(fields.get('id'))
    req.context.can(policies.CREATE)
    flavor = flavor_obj.create(
        req.context, fields['name'].strip(),
        memory_mb=_integer(fields['ram'], 'memory_mb', 1),
        vcpus=_integer(fields['vcpus'], 'vcpus', 1),
        root_gb=_integer(fields['disk'], 'root_gb', 0),
        ephemeral_gb=_integer(fields.get('OS-FLV-EXT-DATA:ephemeral', 0),
                              'ephemeral_gb', 0),
        swap=_integer(fields.get('swap', 0), 'swap', 0),
        rxtx_factor=_rxtx_factor(fields.get('rxtx_factor', 1.0)),
        flavorid=flavorid,
        is_public=validation.to_bool(
            fields.get('os-flavor-access:is_public', True)),
        description=fields.get('description'))
    return _respond(req, flavor)


@microversion.added_in(microversion.V2_55)
def update_flavor(req):
    body = validation.body(req, schemas.UPDATE_V255)
    req.context.can(policies.UPDATE)
    flavor = flavor_obj.get_by_flavor_id(req.context, req.urlvars['id'])
    return _respond(req, flavor_obj.update_description(
        req.context, flavor.flavorid, body['flavor']['description']))


def delete_flavor(req):
    req.context.can(policies.DELETE)
    flavor_obj.destroy(req.context, req.urlvars['id'])
    return api_request.empty_response(status=202)


# Fixed words come before {id}, so they win as in Nova.
ROUTES = {
    '/flavors': {'GET': list_flavors, 'POST': create_flavor},
    '/flavors/detail': {'GET': list_flavors_detail},
    '/flavors/{id}': {'GET': show_flavor, 'PUT': update_flavor,
                      'DELETE': delete_flavor},
}


# ---------------------------------------------------------------- listing

def _listing(req):
    """One page of flavors, and ``flavors_links`` when the page is full."""
    params = validation.query(req, _index_schema(req.version))
    max_limit = req.app.conf.api.max_limit
    limit_text = validation.last(params, 'limit')
    limit = (max_limit if limit_text is None
             else min(integers.read(limit_text), max_limit))
    marker = validation.last(params, 'marker')
    flavors = flavor_obj.get_all(
        req.context, _filters(req, params),
        sort_key=validation.last(params, 'sort_key', 'flavorid'),
        sort_dir=validation.last(params, 'sort_dir', 'asc'),
        limit=limit, marker=marker)
    links = req.next_links(flavors, limit, lambda flavor: flavor.flavorid,
                           validation.last_values(params))
    return flavors, {'flavors_links': links} if links else None


def _filters(req, params):
    """Nova's filters: only an admin chooses public, private or all."""
    if req.context.is_admin:
        visibility = {'is_public': _is_public(
            validation.last(params, 'is_public'))}
    else:
        visibility = {'is_public': True, 'disabled': False}
    return flavor_obj.Filters(
        min_memory_mb=_minimum(params, 'minRam'),
        min_root_gb=_minimum(params, 'minDisk'),
        name=validation.last(params, 'name'), **visibility)


def _is_public(text):
    """Absent or true: public (and shared); ``none``: all; false: private."""
    if text is None:
        return True
    if text.lower() == 'none':
        return None
    try:
        return strutils.bool_from_string(text, strict=True)
    except ValueError:
        raise webob.exc.HTTPBadRequest(
            explanation='Invalid is_public filter [%s]' % text)


def _minimum(params, name):
    """Nova's int() of a minimum; one past every flavor matches none."""
    text = validation.last(params, name)
    if text is None:
        return None
    value = integers.read(text)
    if value is None:
        raise webob.exc.HTTPBadRequest(
            explanation='Invalid %s filter [%s]' % (name, text))
    return value


def _index_schema(version):
    if version.matches(microversion.V2_102):
        return schemas.INDEX_QUERY_V2102
    if version.matches(microversion.V2_75):
        return schemas.INDEX_QUERY_V275
    return schemas.INDEX_QUERY


# ---------------------------------------------------------------- create

def _create_schema(version):
    if version.matches(microversion.V2_102):
        return schemas.CREATE_V2102
    if version.matches(microversion.V2_55):
        return schemas.CREATE_V255
    return schemas.CREATE


def _invalid_input(reason):
    return webob.exc.HTTPBadRequest(
        explanation='Invalid input received: %s' % reason)


def _integer(value, name, minimum):
    """Nova's check of a count, named after its column."""
    number = integers.read(str(value))
    if number is None:
        raise _invalid_input('%s must be an integer' % name)
    if number < minimum:
        raise _invalid_input('%s must be >= %d' % (name, minimum))
    if number > objects_base.MAX_INTEGER_ID:
        raise _invalid_input('%s must be <= %d'
                             % (name, objects_base.MAX_INTEGER_ID))
    return number


def _flavor_id(value):
    """The id to store: a string, or a number's text (400 if no id's)."""
    if value is None or isinstance(value, str):
        return value
    text = str(value)
    validation.validate({'id': text}, schemas.FLAVOR_ID_TEXT)
    return text


def _rxtx_factor(value):
    try:
        factor = float(value)
    except ValueError:
        factor = None
    if factor is None or not 0 < factor <= MAX_RXTX_FACTOR:
        raise _invalid_input("'rxtx_factor' argument must be a float "
                             "between 0 and %g" % MAX_RXTX_FACTOR)
    return factor


# ---------------------------------------------------------------- views

def _links(req):
    """Links of this request's flavors, with its project id if it had one."""
    project = req.path_info.partition('/flavors')[0]
    return views.Links(req.link_base(), project)


def _shows_extra_specs(req):
    """From 2.61, whether the caller may read extra specs (never a 403)."""
    return req.version.matches(microversion.V2_61) and req.context.can(
        spec_policies.INDEX, {'project_id': req.context.project_id},
        fatal=False)


def _respond(req, flavor):
    return api_request.json_response({'flavor': views.detail(
        flavor, req.version, _links(req), _shows_extra_specs(req))})
