"""Paste factories for etc/nova_forcedown/api-paste.ini, and loading it.

:func:`load_app` hands the private ConfigOpts, and the one policy
Authorizer of the application, to every factory: paste's global_conf
carries a key (paste interpolates its values, so it must be a string) into
:data:`_LOADING`, which holds them only while paste builds the pipelines
(it calls every factory before loadapp returns). Nothing reads a global
CONF: the oslo.middleware pieces get the ConfigOpts object itself (given a
dict, they fall back to the global ``cfg.CONF``).
"""

import collections
import os
import uuid

from oslo_log import log as logging
from oslo_middleware import healthcheck
from oslo_middleware.healthcheck import opts as healthcheck_opts
from oslo_middleware import http_proxy_to_wsgi
from oslo_middleware import request_id
from oslo_middleware import sizelimit
from paste import deploy as paste_deploy

from nova_forcedown.api import auth
from nova_forcedown.api.controllers import versions
from nova_forcedown.api import encoding
from nova_forcedown.api import extensions
from nova_forcedown.api import fault
from nova_forcedown.api import filters
from nova_forcedown.api import healthcheck as api_healthcheck
from nova_forcedown.api import request as api_request
from nova_forcedown.api import router
from nova_forcedown import notifications
from nova_forcedown import objects
from nova_forcedown import policy
from nova_forcedown import rpc
from nova_forcedown.servicegroup import api as servicegroup

LOG = logging.getLogger(__name__)

CONF_KEY = 'nova_forcedown_conf'
PASTE_NAME = 'osapi_compute'
PACKAGED_PASTE = os.path.join(os.path.dirname(__file__), 'api-paste.ini')

# What the factories of one load_app share, by key, while it runs.
_Assembly = collections.namedtuple('_Assembly', 'conf authorizer')
_LOADING = {}


def _assembly(global_conf):
    return _LOADING[global_conf[CONF_KEY]]


def _conf(global_conf):
    return _assembly(global_conf).conf


def find_paste_config(conf):
    """The paste file: absolute, beside a config file, or the packaged one."""
    name = conf.wsgi.api_paste_config
    if os.path.isabs(name):
        return name
    for directory in [os.path.dirname(path) for path in conf.config_file]:
        candidate = os.path.join(directory, name)
        if os.path.exists(candidate):
            return candidate
    return PACKAGED_PASTE


def load_app(conf):
    """Build the WSGI app from the paste file.

    The database must be configured first (db.engine.configure), once.
    """
    objects.register_all()
    path = os.path.abspath(find_paste_config(conf))
    LOG.info('Loading the API from %s', path)
    key = uuid.uuid4().hex
    _LOADING[key] = _Assembly(conf, policy.Authorizer(conf))
    try:
        return paste_deploy.loadapp('config:' + path, name=PASTE_NAME,
                                    global_conf={CONF_KEY: key})
    finally:
        del _LOADING[key]


# ------------------------------------------------------------ composites

class RootMap:
    """Dispatch on the path prefix, as Nova's URL map does.

    ``/v2`` and ``/v2.1`` alone (with or without a trailing slash) are
    unauthenticated version documents; paths below them go to the
    authenticated APIs mounted as ``/v2/+`` and ``/v2.1/+``.
    """

    PREFIXES = ('/v2.1', '/v2', '/healthcheck')

    def __init__(self, apps, link_prefix):
        self.apps = apps
        self.link_prefix = link_prefix

    def __call__(self, environ, start_response):
        environ['nova_forcedown.link_prefix'] = self.link_prefix
        path = environ.get('PATH_INFO') or '/'
        for prefix in self.PREFIXES:
            if prefix not in self.apps:
                continue
            if path in (prefix, prefix + '/'):
                return self.apps[prefix](environ, start_response)
            mounted = self.apps.get(prefix + '/+')
            if mounted is not None and path.startswith(prefix + '/'):
                environ['SCRIPT_NAME'] = environ.get('SCRIPT_NAME',
                                                     '') + prefix
                environ[api_request.ENV_MOUNT] = prefix
                environ['PATH_INFO'] = path[len(prefix):]
                return mounted(environ, start_response)
        return self.apps['/'](environ, start_response)


def root_factory(loader, global_conf, **local_conf):
    conf = _conf(global_conf)
    apps = {path: loader.get_app(name, global_conf=global_conf)
            for path, name in local_conf.items()}
    return RootMap(apps, conf.api.compute_link_prefix)


def pipeline_factory(loader, global_conf, **local_conf):
    """The pipeline named by ``[api] auth_strategy``."""
    conf = _conf(global_conf)
    names = local_conf[conf.api.auth_strategy].split()
    app = loader.get_app(names[-1], global_conf=global_conf)
    for name in reversed(names[:-1]):
        app = loader.get_filter(name, global_conf=global_conf)(app)
    return app


# ------------------------------------------------------------------ apps

def versions_factory(global_conf, **local_conf):
    return versions.root


def version_v2_factory(global_conf, **local_conf):
    return versions.version_app('v2.0')


def version_v21_factory(global_conf, **local_conf):
    return versions.version_app('v2.1')


def _state(conf, legacy_v2):
    # However the app is served (nova-forcedown-api, nova_forcedown.wsgi, an
    # operator's own paste pipeline), its API apps are built here, so this
    # is where the API process learns how to notify and whether to cast
    # tasks to the agents. Cheap and idempotent; nothing connects before
    # the first notification or cast.
    notifications.configure(conf)
    rpc.configure(conf)
    return api_request.AppState(
        conf, servicegroup.API(conf),
        extensions.load_enabled(conf.api.disabled_extensions),
        legacy_v2=legacy_v2)


def api_v21_factory(global_conf, **local_conf):
    conf = _conf(global_conf)
    return router.APIRouter(_state(conf, False), router.load_route_table())


def api_legacy_v2_factory(global_conf, **local_conf):
    conf = _conf(global_conf)
    return router.APIRouter(_state(conf, True), router.load_route_table())


def healthcheck_factory(global_conf, **local_conf):
    """/healthcheck: 503 while the database does not answer SELECT 1.

    ``[healthcheck] backends`` defaults to the ``database`` backend
    (api/healthcheck.py); an operator may list others, e.g.
    ``disable_by_file``, or none.
    """
    conf = _conf(global_conf)
    conf.register_opts(healthcheck_opts.HEALTHCHECK_OPTS, group='healthcheck')
    conf.set_default('backends', [api_healthcheck.NAME], group='healthcheck')
    return healthcheck.Healthcheck(None, conf)


# --------------------------------------------------------------- filters

class _RequestId(request_id.RequestId):
    # Nova's older header, still read by python-novaclient.
    compat_headers = ['x-compute-request-id']


def request_id_factory(global_conf, **local_conf):
    """The request id, and an anonymous context carrying it.

    The outermost filter of every pipeline, so that every log line of a
    request names it, whatever answers it.
    """
    conf = _conf(global_conf)

    def _filter(app):
        return _RequestId(auth.RequestContextScope(app), conf)
    return _filter


class _HTTPProxyToWSGI(http_proxy_to_wsgi.HTTPProxyToWSGI):
    """oslo.middleware's, and an empty Host header counts as none.

    webob builds links from a Host header even when it is empty
    ("http:///v2/"); without one, it names the server's own address.
    """

    def process_request(self, req):
        if not req.environ.get('HTTP_HOST', '').strip():
            req.environ.pop('HTTP_HOST', None)
        return super().process_request(req)

    # It only rewrites the environ: oslo.middleware's own __call__ would
    # make and copy a response, and inspect process_response's signature,
    # at every request.
    __call__ = filters.RequestFilter.__call__


def http_proxy_to_wsgi_factory(global_conf, **local_conf):
    """X-Forwarded-Proto/-Host/-For/-Prefix and Forwarded, when trusted.

    Only when ``[oslo_middleware] enable_proxy_headers_parsing`` is true
    (default false). X-Forwarded-Ssl and X-Forwarded-Protocol are never
    read.
    """
    conf = _conf(global_conf)

    def _filter(app):
        return _HTTPProxyToWSGI(app, conf)
    return _filter


def faultwrap_factory(global_conf, **local_conf):
    return fault.FaultWrapper


def utf8_factory(global_conf, **local_conf):
    return encoding.RequireUTF8


def sizelimit_factory(global_conf, **local_conf):
    conf = _conf(global_conf)
    limit = conf.wsgi.max_request_body_size

    def _filter(app):
        limiter = sizelimit.RequestBodySizeLimiter(app, conf)
        limiter.oslo_conf.set_override('max_request_body_size', limit,
                                       group='oslo_middleware')
        return _DeclaredSizeLimit(limiter, limit)
    return _filter


class _DeclaredSizeLimit(filters.RequestFilter):
    """A Content-Length over the limit refused with the limit in the fault.

    oslo.middleware's own refusal of it leaves the limit out of its
    message; bodies without a Content-Length are its to count.
    """

    def __init__(self, application, limit):
        super().__init__(application)
        self.limit = limit

    def process_request(self, req):
        if req.content_length is not None and req.content_length > self.limit:
            return fault.client_error(
                413, fault.BODY_TOO_LARGE_MESSAGE % self.limit)
        return None


def noauth2_factory(global_conf, **local_conf):
    return auth.NoAuth2


def http_basic_factory(global_conf, **local_conf):
    conf = _conf(global_conf)

    def _filter(app):
        return auth.HTTPBasicAuth(app, conf.api.http_basic_auth_user_file,
                                  conf.api.http_basic_admin_users)
    return _filter


def authtoken_factory(global_conf, **local_conf):
    conf = _conf(global_conf)

    # Imported here: keystonemiddleware pulls in much that other auth
    # strategies never need.
    from keystonemiddleware import auth_token

    def _filter(app):
        return auth_token.AuthProtocol(app, {'oslo_config_config': conf})
    return _filter


def context_factory(global_conf, **local_conf):
    authorizer = _assembly(global_conf).authorizer

    def _filter(app):
        return auth.ContextMiddleware(app, authorizer)
    return _filter
