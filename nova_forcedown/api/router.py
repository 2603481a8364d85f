"""Route requests to handlers: tables from controller entry points.

Each controller module (an entry point in ``nova_forcedown.api.controllers``)
exports ``ROUTES``: ``{path: {method: handler}}``. The router merges them,
refuses a duplicate path and method at start-up, answers 404 for unknown
paths and 405 with ``Allow`` for unknown methods, and serves every path with
and without a leading ``/{project_id}``.
"""

import routes
from stevedore import extension
import webob.dec
import webob.exc

from nova_forcedown.api import fault
from nova_forcedown.api import microversion
from nova_forcedown.api import request as api_request
from nova_forcedown.objects import base as objects_base

CONTROLLERS_NAMESPACE = 'nova_forcedown.api.controllers'
PROJECT_ID_PATTERN = '[0-9a-f-]+'
# Methods that only read: their handler's reads share one transaction.
READ_METHODS = frozenset(('GET', 'HEAD'))


class DuplicateRoute(Exception):
    pass


def raise_load_failure(manager, entrypoint, exc):
    raise exc


def load_route_table():
    """Merge the route tables of every controller entry point.

    A controller that fails to load stops the start-up.
    """
    manager = extension.ExtensionManager(
        CONTROLLERS_NAMESPACE,
        on_load_failure_callback=raise_load_failure)
    return merge_route_tables(
        sorted((ext.name, ext.plugin.ROUTES) for ext in manager))


def merge_route_tables(named_tables):
    """One ``{path: {method: handler}}`` from ``(name, ROUTES)`` pairs.

    The same path and method in two tables raises DuplicateRoute.
    """
    table = {}
    for name, routes_table in named_tables:
        for path, methods in routes_table.items():
            merged = table.setdefault(path, {})
            for method, handler in methods.items():
                if method in merged:
                    raise DuplicateRoute('%s %s is routed twice (%s)'
                                         % (method, path, name))
                merged[method] = handler
    return table


def build_mapper(table):
    """The mapper of ``table``'s paths, literal segments tried first.

    ``/servers/detail`` is then found before ``/servers/{id}`` whichever
    controller's table came first.
    """
    mapper = routes.Mapper()
    for path in sorted(table, key=_literal_first):
        mapper.connect('/{project_id}' + path, _path=path,
                       requirements={'project_id': PROJECT_ID_PATTERN})
        mapper.connect(path, _path=path)
    return mapper


def _literal_first(path):
    return [(segment.startswith('{'), segment)
            for segment in path.split('/')]


class APIRouter:
    """The compute API: microversion, routing and version headers."""

    def __init__(self, state, table):
        self.state = state
        self.table = table
        self.mapper = build_mapper(table)

    @webob.dec.wsgify(RequestClass=api_request.Request)
    def __call__(self, req):
        req.environ[api_request.ENV_APP] = self.state
        if self.state.legacy_v2:
            req.environ[api_request.ENV_VERSION] = (
                microversion.LEGACY_V2_VERSION)
            return self._dispatch(req)
        try:
            version = microversion.from_headers(req.headers)
        except microversion.InvalidVersion as exc:
            return fault.client_error(400, str(exc))
        except microversion.UnsupportedVersion as exc:
            return self._versioned(fault.client_error(406, (
                'Version %s is not supported by the API. Minimum is %s and '
                'maximum is %s.' % (exc.version, microversion.MIN_VERSION,
                                    microversion.MAX_VERSION))), exc.version)
        req.environ[api_request.ENV_VERSION] = version
        return self._versioned(self._dispatch(req), version)

    @staticmethod
    def _versioned(resp, version):
        for header, value in microversion.response_headers(version):
            resp.headers.add(header, value)
        return resp

    def _dispatch(self, req):
        try:
            handler = self._route(req)
            if req.method not in READ_METHODS:
                return handler(req)
            with objects_base.one_read(req.context):
                return handler(req)
        except Exception as exc:  # noqa: faults carry the version headers
            return fault.from_exception(exc)

    def _route(self, req):
        match = self.mapper.match(req.path_info)
        if match is None:
            raise webob.exc.HTTPNotFound(explanation=microversion.NOT_FOUND)
        methods = self.table[match.pop('_path')]
        handler = methods.get(req.method)
        if handler is None:
            raise method_not_allowed(req.method, methods)
        _check_project_id(req, match.pop('project_id', None))
        req.urlvars = match
        return handler


def method_not_allowed(method, allowed):
    """The 405 of ``method`` on a path that serves the ``allowed`` ones.

    Also for a handler whose path serves its method only from some
    microversion on: below it, the path answers as if it had none.
    """
    return webob.exc.HTTPMethodNotAllowed(
        explanation='The method %s is not allowed for this resource.'
                    % method,
        headers=[('Allow', ', '.join(sorted(allowed)))])


def _check_project_id(req, project_id):
    context_project = req.context.project_id
    if project_id and context_project and project_id != context_project:
        raise webob.exc.HTTPBadRequest(explanation=(
            "Malformed request URL: URL's project_id '%s' doesn't match "
            "Context's project_id '%s'" % (project_id, context_project)))
