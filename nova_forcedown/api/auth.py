"""Authentication middleware, one per ``[api] auth_strategy``, and the
context middleware that turns identity headers into a RequestContext.

``keystone`` uses keystonemiddleware's auth_token (wired in deploy.py);
``http_basic`` checks an htpasswd file of bcrypt hashes with oslo.middleware;
``noauth2`` trusts a ``user:project`` token and exists for development and
tests only.
"""

from oslo_middleware import basic_auth
import webob.dec

from nova_forcedown.api import fault
from nova_forcedown.api import request as api_request
from nova_forcedown import context as nf_context

AUTH_REQUIRED = 'Authentication required'


def _identity_headers(req, user, project, roles):
    req.environ.update({
        'HTTP_X_IDENTITY_STATUS': 'Confirmed',
        'HTTP_X_USER_ID': user,
        'HTTP_X_USER_NAME': user,
        'HTTP_X_ROLES': ','.join(roles),
    })
    if project:
        req.environ['HTTP_X_PROJECT_ID'] = project
        req.environ['HTTP_X_TENANT_ID'] = project


def _strip_identity_headers(req):
    """Drop identity headers a client sent: only middleware may set them."""
    for key in [key for key in req.environ
                if key.startswith(('HTTP_X_USER', 'HTTP_X_PROJECT',
                                   'HTTP_X_TENANT', 'HTTP_X_ROLE',
                                   'HTTP_X_IDENTITY_STATUS',
                                   'HTTP_X_SERVICE_'))]:
        del req.environ[key]


class NoAuth2:
    """Token ``user:project``; user ``admin`` is an administrator.

    Other users get the roles of an ``X-Roles`` header, else ``member``.
    """

    def __init__(self, application):
        self.application = application

    @webob.dec.wsgify
    def __call__(self, req):
        token = req.headers.get('X-Auth-Token', '').strip()
        roles_header = req.headers.get('X-Roles')
        _strip_identity_headers(req)
        if not token:
            return fault.response(401, AUTH_REQUIRED)
        user, _, project = token.partition(':')
        if user == 'admin':
            roles = ['admin', 'member', 'reader']
        elif roles_header:
            roles = [role.strip() for role in roles_header.split(',')]
        else:
            roles = ['member', 'reader']
        _identity_headers(req, user, project or user, roles)
        return req.get_response(self.application)


class HTTPBasicAuth:
    """htpasswd users with bcrypt hashes; ``admin_users`` get role admin."""

    def __init__(self, application, user_file, admin_users):
        basic_auth.validate_auth_file(user_file)
        self.application = application
        self.user_file = user_file
        self.admin_users = set(admin_users)

    @webob.dec.wsgify
    def __call__(self, req):
        _strip_identity_headers(req)
        try:
            token = basic_auth.parse_header(req.environ)
            username, password = basic_auth.parse_token(token)
            basic_auth.authenticate(self.user_file, username, password)
        except webob.exc.HTTPException:
            return fault.response(
                401, AUTH_REQUIRED,
                [('WWW-Authenticate', 'Basic realm="nova-forcedown"')])
        roles = (['admin', 'member', 'reader']
                 if username in self.admin_users else ['member', 'reader'])
        _identity_headers(req, username, None, roles)
        return req.get_response(self.application)


class ContextMiddleware:
    """Build the RequestContext from identity headers; 401 without one."""

    def __init__(self, application, authorizer):
        self.application = application
        self.authorizer = authorizer

    @webob.dec.wsgify
    def __call__(self, req):
        if req.environ.get('HTTP_X_IDENTITY_STATUS') != 'Confirmed':
            return fault.response(401, AUTH_REQUIRED)
        ctx = nf_context.RequestContext.from_environ(
            req.environ, enforcer=self.authorizer)
        if not ctx.user_id:
            return fault.response(401, AUTH_REQUIRED)
        ctx.is_admin = self.authorizer.authorize(
            ctx, 'context_is_admin', {}, fatal=False)
        req.environ[api_request.ENV_CONTEXT] = ctx
        return req.get_response(self.application)
