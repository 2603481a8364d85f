"""os-hypervisors: list, detail, show, statistics, uptime, search, servers.

Every listing is one query joining nodes with their compute service (plus
one for instances when servers are asked for); liveness is computed from
the joined row.
"""

import collections

from oslo_utils import uuidutils
import webob.exc

from nova_forcedown.api import extensions
from nova_forcedown.api import integers
from nova_forcedown.api import microversion
from nova_forcedown.api import request as api_request
from nova_forcedown.api.schemas import hypervisors as schemas
from nova_forcedown.api import validation
from nova_forcedown.api.views import hypervisors as views
from nova_forcedown import exception
from nova_forcedown.objects import compute_node as node_obj
from nova_forcedown.objects import instance as instance_obj
from nova_forcedown.policies import hypervisors as policies

PATTERN_WITH_PAGING = ('Paging over hypervisors with the '
                       'hypervisor_hostname_pattern query parameter is not '
                       'supported.')


# The query is validated before the policy check, as Nova's decorators do.

def list_hypervisors(req):
    params = validation.query(req, _index_schema(req.version))
    req.context.can(policies.LIST)
    return _listing(req, params, views.Hypervisors.summary, 'hypervisors')


def list_hypervisors_detail(req):
    params = validation.query(req, _index_schema(req.version))
    req.context.can(policies.LIST_DETAIL)
    return _listing(req, params, views.Hypervisors.detail, 'hypervisors')


def show_hypervisor(req):
    schema = (schemas.SHOW_QUERY_V253
              if req.version.matches(microversion.V2_53)
              else schemas.SHOW_QUERY)
    params = validation.query(req, schema)
    req.context.can(policies.SHOW)
    node = _node(req, req.urlvars['id'])
    view = views.detail(node, req.is_up(node.service), req.version,
                        _with_status(req))
    if _with_servers(params):
        _add_servers(req, [node], [view],
                     omit_empty=not req.version.matches(microversion.V2_75))
    return api_request.json_response({'hypervisor': view})


@microversion.removed_in(microversion.V2_88)
def hypervisor_statistics(req):
    req.context.can(policies.STATISTICS)
    sums = node_obj.statistics(req.context)
    return api_request.json_response(views.statistics(sums))


@microversion.removed_in(microversion.V2_88)
def hypervisor_uptime(req):
    req.context.can(policies.UPTIME)
    node = _node(req, req.urlvars['id'])
    is_up = req.is_up(node.service)
    if not is_up:
        raise exception.ComputeServiceUnavailable(host=node.host)
    uptime = (node.stats or {}).get('uptime')
    if uptime is None:
        raise webob.exc.HTTPNotImplemented(
            explanation='The requested functionality is not supported.')
    return api_request.json_response({'hypervisor': views.uptime(
        node, is_up, req.version, _with_status(req), uptime)})


@microversion.removed_in(microversion.V2_53)
def search_hypervisors(req):
    req.context.can(policies.SEARCH)
    nodes = _matching(req, req.urlvars['id'])
    return _respond(req, nodes, views.Hypervisors.summary, 'hypervisors')


@microversion.removed_in(microversion.V2_53)
def hypervisor_servers(req):
    req.context.can(policies.SERVERS)
    nodes = _matching(req, req.urlvars['id'])
    view = views.Hypervisors(req.version, _with_status(req))
    is_up = req.is_up
    items = [view.summary(node, is_up(node.service)) for node in nodes]
    _add_servers(req, nodes, items, omit_empty=True)
    return api_request.json_response({'hypervisors': items})


# Fixed words come before {id}, so they win as in Nova.
ROUTES = {
    '/os-hypervisors': {'GET': list_hypervisors},
    '/os-hypervisors/detail': {'GET': list_hypervisors_detail},
    '/os-hypervisors/statistics': {'GET': hypervisor_statistics},
    '/os-hypervisors/{id}': {'GET': show_hypervisor},
    '/os-hypervisors/{id}/uptime': {'GET': hypervisor_uptime},
    '/os-hypervisors/{id}/search': {'GET': search_hypervisors},
    '/os-hypervisors/{id}/servers': {'GET': hypervisor_servers},
}


# ---------------------------------------------------------------- listing

def _listing(req, params, view, key):
    pattern = validation.last(params, 'hypervisor_hostname_pattern')
    limit_text = validation.last(params, 'limit')
    marker = validation.last(params, 'marker')
    summary = view is views.Hypervisors.summary
    if pattern is not None:
        if limit_text is not None or marker is not None:
            raise webob.exc.HTTPBadRequest(explanation=PATTERN_WITH_PAGING)
        nodes = _matching(req, pattern, summary)
        return _respond(req, nodes, view, key, params)
    if not req.version.matches(microversion.V2_33):
        # Every node, with no paging: rendered as the cursor reads them.
        with node_obj.reading_records_with_service(
                req.context, summary=summary) as nodes:
            return _respond(req, nodes, view, key, params)
    limit = _page_size(req, limit_text)
    nodes = node_obj.get_records_with_service(
        req.context, limit=limit, marker=marker, summary=summary)
    return _respond(req, nodes, view, key, params,
                    links=req.next_links(
                        nodes, limit, _marker_of(req),
                        validation.last_values(params)))


def _index_schema(version):
    if version.matches(microversion.V2_53):
        return schemas.INDEX_QUERY_V253
    if version.matches(microversion.V2_33):
        return schemas.INDEX_QUERY_V233
    return schemas.INDEX_QUERY


def _page_size(req, limit_text):
    max_limit = req.app.conf.api.max_limit
    if limit_text is None:
        return max_limit
    return min(integers.read(limit_text), max_limit)


def _respond(req, nodes, view, key, params=None, links=None):
    """``view`` is a method of :class:`views.Hypervisors`.

    ``nodes`` may be an iterator, read once.
    """
    views_of_request = views.Hypervisors(req.version, _with_status(req))
    is_up = req.is_up

    def render(node):
        return view(views_of_request, node, is_up(node.service))

    extra = {key + '_links': links} if links else None
    if not (params and _with_servers(params)):
        return api_request.listing_response(key, nodes, render, extra)
    nodes = list(nodes)
    items = [render(node) for node in nodes]
    _add_servers(req, nodes, items,
                 omit_empty=not req.version.matches(microversion.V2_75))
    return api_request.json_response(dict({key: items}, **(extra or {})))


def _marker_of(req):
    """A node's marker: its uuid from 2.53, its id before."""
    if req.version.matches(microversion.V2_53):
        return lambda node: node.uuid
    return lambda node: node.id


def _matching(req, pattern, summary=True):
    nodes = node_obj.get_records_with_service(
        req.context, hostname_pattern=pattern, summary=summary)
    if not nodes:
        raise exception.HypervisorPatternNotFound(pattern=pattern)
    return nodes


def _with_status(req):
    return (not req.legacy_v2 or
            req.app.extension_enabled(extensions.HYPERVISOR_STATUS))


def _with_servers(params):
    value = validation.last(params, 'with_servers')
    return value is not None and validation.to_bool(value)


def _add_servers(req, nodes, items, omit_empty=False):
    """Add each node's instances (matched by host) in one query."""
    instances = instance_obj.get_by_hosts(
        req.context, [node.host for node in nodes])
    by_host = collections.defaultdict(list)
    for instance in instances:
        by_host[instance.host].append(instance)
    for node, item in zip(nodes, items):
        servers = views.servers(by_host.get(node.host, []))
        if servers or not omit_empty:
            item['servers'] = servers


# ------------------------------------------------------------- one node

def _node(req, node_id):
    """The node ``node_id`` with its service; id rules by microversion."""
    not_found = exception.ComputeNodeNotFound(id=node_id)
    if req.version.matches(microversion.V2_53):
        if not uuidutils.is_uuid_like(node_id):
            raise webob.exc.HTTPBadRequest(
                explanation='Invalid uuid %s' % node_id)
        lookup = node_id
    else:
        lookup = validation.db_integer(node_id)
        if lookup is None:
            raise not_found
    try:
        return node_obj.get_record(req.context, lookup)
    except exception.ComputeNodeNotFound:
        raise not_found
