"""Servers, the read side: GET /servers, /servers/detail, /servers/{id}.

A listing goes as Nova's: query schema, policy, the filters the caller may
use (the rest silently dropped), status to vm and task states, deleted and
changes-since, all projects or the caller's, sort, page. Then one query of
the servers, and one each for their hosts' compute services (host_status),
zones and, from 2.26, tags: a constant number of statements whatever the
page holds.
"""

from oslo_utils import strutils
import webob.exc

from nova_forcedown.api import cycles
from nova_forcedown.api import integers
from nova_forcedown.api import microversion
from nova_forcedown.api import request as api_request
from nova_forcedown.api.schemas import servers as schemas
from nova_forcedown.api import validation
from nova_forcedown.api.views import servers as views
from nova_forcedown.objects import host_zones
from nova_forcedown.objects import instance as instance_obj
from nova_forcedown.objects import instance_fault
from nova_forcedown.objects import instance_status
from nova_forcedown.objects import service as service_obj
from nova_forcedown.policies import servers as policies

# Parameters that page and sort, never filters.
_PAGING = ('limit', 'marker', 'sort_key', 'sort_dir')
# Filters every project reader may use, and from which microversion.
_USER_FILTERS = (
    (microversion.V2_1, ('reservation_id', 'name', 'status', 'image',
                         'flavor', 'ip', 'changes-since', 'all_tenants',
                         'ip6')),
    (microversion.V2_26, ('tags', 'tags-any', 'not-tags', 'not-tags-any')),
    (microversion.V2_66, ('changes-before',)),
    (microversion.V2_73, ('locked',)),
    (microversion.V2_83, ('availability_zone', 'config_drive', 'key_name',
                          'created_at', 'launched_at', 'terminated_at',
                          'power_state', 'task_state', 'vm_state',
                          'progress', 'user_id')),
    (microversion.V2_90, ('hostname',)),
)
# Names of joined tables: a filter on them is refused, as in Nova.
_JOINED = ('block_device_mapping', 'services', 'metadata', 'pci_devices',
           'security_groups', 'info_cache', 'system_metadata')
# Filters on a column of the same meaning, matched exactly.
_EXACT = {'host': 'host', 'project_id': 'project_id', 'user_id': 'user_id',
          'uuid': 'uuid', 'image': 'image_ref', 'image_ref': 'image_ref',
          'key_name': 'key_name', 'availability_zone': 'availability_zone',
          'reservation_id': 'reservation_id',
          'config_drive': 'config_drive', 'locked_by': 'locked_by',
          'access_ip_v4': 'access_ip_v4', 'access_ip_v6': 'access_ip_v6'}
# Filters matched as a regular expression, as Nova's.
_REGEX = {'name': 'name', 'display_name': 'name', 'node': 'node',
          'hostname': 'hostname'}
# Tag filters (2.26): comma-separated tags, the last value given.
_TAGS = {'tags': 'tags', 'tags-any': 'tags_any', 'not-tags': 'not_tags',
         'not-tags-any': 'not_tags_any'}
# Filters on what this API does not match yet (addresses): nothing matches
# them.
_NEVER_MATCHED = ('ip', 'ip6')
# Sort keys this API can order by; others are dropped (400 from 2.75).
_SORT_KEYS = {'created_at', 'updated_at', 'display_name', 'host', 'node',
              'uuid', 'vm_state', 'task_state', 'launched_at',
              'terminated_at', 'power_state', 'project_id', 'user_id',
              'hostname', 'key_name', 'availability_zone', 'id'}
_ADMIN_SORT_KEYS = ('host', 'node')

# The columns of a brief view (views.Servers.brief) and its next link.
BRIEF_COLUMNS = ('uuid', 'display_name')
# A page of servers on more hosts than this reads every compute service and
# zone membership: a longer IN list costs more than reading them all.
MAX_HOSTS_LOOKED_UP = 1000

INVALID_STATUS = 'Invalid status value'
DELETED_FOR_ADMINS = 'Only administrators may list deleted instances'


def list_servers(req):
    return _list(req, policies.INDEX, policies.INDEX_ALL_TENANTS,
                 views.Servers.brief)


def list_servers_detail(req):
    return _list(req, policies.DETAIL, policies.DETAIL_ALL_TENANTS,
                 views.Servers.detail)


def show_server(req):
    validation.query(req, schemas.SHOW_QUERY_V2102
                     if req.version.matches(microversion.V2_102)
                     else schemas.SHOW_QUERY)
    if req.version.matches(microversion.V2_26):
        server, tags = _authorized_with_tags(req, policies.SHOW)
        view = _views(req, [server], detail=True,
                      tags={server.uuid: tags} if tags else {})
    else:
        server = authorized(req, policies.SHOW)
        view = _views(req, [server], detail=True)
    return api_request.json_response({'server': view.show(server)})


ROUTES = {
    '/servers': {'GET': list_servers},
    '/servers/detail': {'GET': list_servers_detail},
    '/servers/{id}': {'GET': show_server},
}


def authorized(req, rule):
    """The server of the path, once ``rule`` allows the caller to act on it.

    404 first: a server the caller cannot see does not exist for them.
    The controllers of a server's actions and metadata look it up so too.
    """
    server = instance_obj.get_record(
        req.context, req.urlvars['id'], project_id=req.visible_project)
    req.context.can(rule, {'project_id': server.project_id})
    return server


def _authorized_with_tags(req, rule):
    """(the server, its tags) read together, as :func:`authorized` allows."""
    server, tags = instance_obj.get_record_with_tags(
        req.context, req.urlvars['id'], project_id=req.visible_project)
    req.context.can(rule, {'project_id': server.project_id})
    return server, tags


# ---------------------------------------------------------------- listing

def _list(req, rule, all_tenants_rule, render):
    with cycles.paused():
        return _listing(req, rule, all_tenants_rule, render)


def _listing(req, rule, all_tenants_rule, render):
    params = validation.query(req, _index_schema(req.version))
    context = req.context
    context.can(rule, {'project_id': context.project_id})
    search = _allowed_filters(req, params)
    matching = _matching(req, search, all_tenants_rule)
    detail = render is views.Servers.detail
    links = None
    if matching is None:
        servers = []
    else:
        limit = _page_size(req, validation.last(params, 'limit'))
        sort = _sort(req, params)
        servers = instance_obj.get_records(
            context, matching, limit=limit,
            marker=validation.last(params, 'marker'), sort=sort,
            columns=None if detail else _brief_columns(sort))
        links = req.next_links(servers, limit, lambda server: server.uuid,
                               validation.last_values(params))
    view = _views(req, servers, detail=detail)
    return api_request.listing_response(
        'servers', servers, lambda server: render(view, server),
        {'servers_links': links} if links else None)


def _brief_columns(sort):
    """What a brief listing reads: its view's columns and the sort keys.

    The rest (JSON columns above all) would cost a listing of thousands
    most of its time for nothing.
    """
    return BRIEF_COLUMNS + tuple(key for key, _ in sort)


def _index_schema(version):
    if version.matches(microversion.V2_75):
        return schemas.INDEX_QUERY_V275
    if version.matches(microversion.V2_73):
        return schemas.INDEX_QUERY_V273
    if version.matches(microversion.V2_66):
        return schemas.INDEX_QUERY_V266
    return schemas.INDEX_QUERY


def _allowed_filters(req, params):
    """The filters of ``params`` the caller may use; Nova drops the rest."""
    search = {name: values for name, values in params.items()
              if name not in _PAGING}
    if req.context.can(policies.ALLOW_ALL_FILTERS, fatal=False):
        return search
    allowed = set()
    for version, names in _USER_FILTERS:
        if req.version.matches(version):
            allowed.update(names)
    return {name: values for name, values in search.items()
            if name in allowed}


def _matching(req, search, all_tenants_rule):
    """The listing's filters, or None when nothing can match."""
    for name in search:
        if name in _JOINED or name.startswith('_'):
            raise webob.exc.HTTPBadRequest(
                explanation='Invalid filter field: %s.' % name)
    states = _states(req, search)
    if states is None or any(search.get(name) for name in _NEVER_MATCHED):
        return None
    vm_states, task_states, deleted = states
    last = validation.last_values(search)
    since, before = _changes(last)
    if 'deleted' in last:
        deleted = strutils.bool_from_string(last['deleted'], default=False)
    elif deleted is None and since is None and before is None:
        deleted = False
    exact = {column: last[name] for name, column in _EXACT.items()
             if name in last}
    exact.pop('project_id', None)
    project_id = _project_scope(req, last, all_tenants_rule)
    if project_id is not None:
        exact['project_id'] = project_id
    if 'power_state' in last:
        power_state = integers.read(last['power_state'])
        if power_state is None:
            # No server has a power state that is no integer.
            return None
        exact['power_state'] = power_state
    regex = {column: last[name] for name, column in _REGEX.items()
             if name in last}
    tags = ({keyword: last[name].split(',') for name, keyword in _TAGS.items()
             if name in last}
            if req.version.matches(microversion.V2_26) else {})
    locked = (strutils.bool_from_string(last['locked'], default=False)
              if 'locked' in last else None)
    return instance_obj.filters(
        exact=exact, regex=regex, vm_states=vm_states,
        task_states=task_states, locked=locked, changes_since=since,
        changes_before=before, deleted=deleted, flavor=last.get('flavor'),
        **tags)


def _states(req, search):
    """(vm_states, task_states, deleted) of the state filters.

    None when the status matches nothing (before 2.38; a 400 from 2.38).
    """
    vm_states = _one_list(search, 'vm_state')
    task_states = _one_list(search, 'task_state')
    statuses = search.get('status')
    if not statuses:
        return vm_states, task_states, None
    wanted = {status.upper() for status in statuses}
    deleted = None
    if wanted == {instance_status.DELETED}:
        if not req.context.is_admin:
            raise webob.exc.HTTPForbidden(explanation=DELETED_FOR_ADMINS)
        deleted = True
    states = instance_status.states_of(wanted)
    if states is None:
        if req.version.matches(microversion.V2_38):
            raise webob.exc.HTTPBadRequest(explanation=INVALID_STATUS)
        return None
    if states.task_states is not None:
        task_states = states.task_states
    return states.vm_states, task_states, deleted


def _one_list(search, name):
    values = search.get(name)
    return [values[-1]] if values else None


def _changes(last):
    return validation.changes_window(last)


def _project_scope(req, last, all_tenants_rule):
    """The project the listing is limited to, None for all projects.

    Without all_tenants it is the caller's, even for admins; with it, the
    project_id (or tenant_id) filter if one is given.
    """
    if 'all_tenants' not in last:
        return req.context.project_id
    text = last['all_tenants']
    if text != '':
        try:
            strutils.bool_from_string(text, strict=True)
        except ValueError as exc:
            raise webob.exc.HTTPBadRequest(
                explanation='Invalid input received: %s' % exc)
    if text != '' and not strutils.bool_from_string(text):
        return req.context.project_id
    req.context.can(all_tenants_rule)
    return last.get('project_id', last.get('tenant_id'))


def _sort(req, params):
    keys = params.get('sort_key') or []
    directions = params.get('sort_dir') or []
    if not keys:
        return instance_obj.DEFAULT_SORT
    sort = []
    for position, key in enumerate(keys):
        direction = (directions[position] if position < len(directions)
                     else 'desc')
        if direction not in ('asc', 'desc') or key not in _SORT_KEYS:
            if req.version.matches(microversion.V2_75):
                raise webob.exc.HTTPBadRequest(explanation=(
                    'Invalid sort %s' % (key if key not in _SORT_KEYS
                                         else direction)))
            continue
        if key in _ADMIN_SORT_KEYS and not req.context.is_admin:
            raise webob.exc.HTTPForbidden(
                explanation='Only administrators can sort servers by %s'
                % key)
        sort.append((key, direction))
    if 'id' not in (key for key, _ in sort):
        sort.append(('id', 'desc'))
    return tuple(sort)


def _page_size(req, limit_text):
    """``limit`` (digits, as many as sent) up to [api] max_limit."""
    max_limit = req.app.conf.api.max_limit
    if limit_text is None:
        return max_limit
    if not limit_text.isascii() or not limit_text.isdigit():
        raise webob.exc.HTTPBadRequest(
            explanation='limit param must be an integer')
    return min(integers.read(limit_text), max_limit)


# ------------------------------------------------------------------ views

def _views(req, servers, detail, tags=None):
    """The view of ``servers``; ``tags``: {uuid: tags}, when read already."""
    context = req.context
    target = {'project_id': context.project_id}
    host_status = None
    if detail and req.version.matches(microversion.V2_16):
        if context.can(policies.SHOW_HOST_STATUS, target, fatal=False):
            host_status = 'all'
        elif context.can(policies.SHOW_HOST_STATUS_UNKNOWN_ONLY, target,
                         fatal=False):
            host_status = 'unknown-only'
    hosts = (sorted({server.host for server in servers if server.host})
             if detail else [])
    services, zones = _hosts_of(req, hosts, with_services=bool(host_status))
    options = views.ServerOptions(
        extended=detail and context.can(policies.EXTENDED_ATTRIBUTES,
                                        target, fatal=False),
        host_status=host_status,
        extra_specs=detail and context.can(policies.SHOW_FLAVOR_EXTRA_SPECS,
                                           target, fatal=False),
        links=link_bases(req), services=services,
        is_up=req.is_up, zones=zones,
        faults=_faults(context, servers) if detail else None,
        fault_details=context.is_admin,
        tags=(tags if tags is not None else
              instance_obj.tags_of(context, servers)
              if detail and req.version.matches(microversion.V2_26)
              else None))
    return views.Servers(req.version, options)


def _hosts_of(req, hosts, with_services):
    """({host: its compute service record} or {}, HostZones or None).

    The services only ``with_services``. One host (a server shown, or a
    listing of one host's) is one statement, services and zones together.
    """
    context = req.context
    conf = req.app.conf
    if not hosts:
        return {}, None
    if with_services and len(hosts) == 1:
        records, zones = service_obj.ServiceList.get_records_of_host(
            context, hosts[0], binary=service_obj.COMPUTE_BINARY)
        return ({record.host: record for record in records},
                host_zones.HostZones.of_host(conf, hosts[0], zones))
    # None: every host's.
    looked_up = hosts if len(hosts) <= MAX_HOSTS_LOOKED_UP else None
    services = {}
    if with_services:
        services = {service.host: service for service in
                    service_obj.ServiceList.get_records(
                        context, binary=service_obj.COMPUTE_BINARY,
                        hosts=looked_up)}
    return services, host_zones.HostZones.load(context, conf, looked_up)


def _faults(context, servers):
    """The newest fault of each server a view shows it for; no SQL if none."""
    return instance_fault.latest_of(context, [
        server.uuid for server in servers
        if instance_status.status(server.vm_state, server.task_state,
                                  deleted=bool(server.deleted))
        in instance_status.WITH_FAULT])


def link_bases(req):
    """(self, bookmark) URL bases of links.

    This API with its version prefix and, for bookmarks, without it; both
    with the URL's project id, if any.
    """
    base = req.link_base()
    mount = req.environ.get(api_request.ENV_MOUNT, '')
    bookmark = base[:-len(mount)] if mount and base.endswith(mount) else base
    project = req.path_info[:req.path_info.find('/servers')]
    return base + project, bookmark + project
