"""Authentication middleware, one per ``[api] auth_strategy``, and the
middleware that give each request its RequestContext.

``keystone`` uses keystonemiddleware's auth_token (wired in deploy.py);
``http_basic`` checks an htpasswd file of bcrypt hashes, parsed with
oslo.middleware; ``noauth2`` trusts a ``user:project`` token and exists for
development and tests only.

Every request first gets an anonymous context carrying only its request id
(:class:`RequestContextScope`), so what is logged before authentication
names this request and nobody; :class:`ContextMiddleware` replaces it with
the authenticated one.
"""

import collections

import bcrypt
from oslo_context import context as oslo_context
from oslo_log import log as logging
from oslo_middleware import basic_auth
from oslo_middleware import request_id
import webob.exc

from nova_forcedown.api import fault
from nova_forcedown.api import filters
from nova_forcedown.api import request as api_request
from nova_forcedown import context as nf_context

LOG = logging.getLogger(__name__)

AUTH_REQUIRED = 'Authentication required'

ADMIN_ROLES = ['admin', 'member', 'reader']
USER_ROLES = ['member', 'reader']

# Identity headers only middleware may set: a client's are dropped.
# oslo.context reads all of these into the request context.
_IDENTITY_PREFIXES = ('HTTP_X_USER', 'HTTP_X_PROJECT', 'HTTP_X_TENANT',
                      'HTTP_X_ROLE', 'HTTP_X_IDENTITY_STATUS',
                      'HTTP_X_SERVICE_', 'HTTP_X_DOMAIN_',
                      'HTTP_X_IS_ADMIN_PROJECT',
                      'HTTP_OPENSTACK_SYSTEM_SCOPE')

# bcrypt reads at most this many bytes of a password. bcrypt 5 refuses a
# longer one (ValueError) where older versions and htpasswd cut it short;
# here a longer password is simply a wrong one.
BCRYPT_MAX_PASSWORD_BYTES = 72

# The dummy hash's cost for a file with no bcrypt hash: bcrypt's default.
DEFAULT_BCRYPT_COST = 12

# How much of a user name a log line shows.
_LOGGED_NAME_CHARS = 64


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
                if key.startswith(_IDENTITY_PREFIXES)]:
        del req.environ[key]


def _loggable(name):
    """``name`` as a log line may show it: escaped, quoted and short.

    A client chooses the user name it sends; a newline or an escape
    sequence in it must not forge log lines or drive a terminal.
    """
    shown = ascii(name[:_LOGGED_NAME_CHARS])
    return shown + '...' if len(name) > _LOGGED_NAME_CHARS else shown


class NoAuth2(filters.RequestFilter):
    """Token ``user:project``; user ``admin`` is the administrator.

    Other users get roles ``member`` and ``reader``, or the roles an
    ``X-Roles`` header names, so that a developer can try policy rules for
    custom roles (``fencer``); that header never grants ``admin``.
    """

    def process_request(self, req):
        token = req.headers.get('X-Auth-Token', '').strip()
        roles_header = req.headers.get('X-Roles', '')
        _strip_identity_headers(req)
        # A user or project id is logged with every line of the request.
        if not token or not token.isprintable():
            return fault.client_error(401, AUTH_REQUIRED)
        user, _, project = token.partition(':')
        if user == 'admin':
            roles = ADMIN_ROLES
        else:
            roles = _custom_roles(roles_header) or USER_ROLES
        _identity_headers(req, user, project or user, roles)
        return None


def _custom_roles(header):
    """Roles named in an X-Roles header, never admin.

    oslo.policy matches role names without regard to case, so neither is
    ``Admin`` kept.
    """
    names = [name.strip() for name in header.split(',')]
    return [name for name in names
            if name and name.isprintable() and name.lower() != 'admin']


class HTTPBasicAuth(filters.RequestFilter):
    """htpasswd users with bcrypt hashes; ``admin_users`` get role admin.

    The file is read at every request, as oslo.middleware does, so that
    added users and changed passwords apply at once. Every attempt costs
    one bcrypt check, whether or not the user exists and whatever the
    password's length; an unknown user's is at the most common cost among
    the file's hashes, so that it takes as long as a wrong password of a
    typical user and how long a 401 takes does not tell which users exist.
    """

    def __init__(self, application, user_file, admin_users):
        basic_auth.validate_auth_file(user_file)
        super().__init__(application)
        self.user_file = user_file
        self.admin_users = set(admin_users)
        self._dummy_hashes = {}
        # Made now, so that the first unknown user does not pay for it.
        self._dummy_hash(_read_hashes(user_file).values())

    def process_request(self, req):
        _strip_identity_headers(req)
        username = self._authenticate(req)
        if username is None:
            # _authenticate logged the refusal's one line.
            return fault.response(
                401, AUTH_REQUIRED,
                [('WWW-Authenticate', 'Basic realm="nova-forcedown"')])
        roles = ADMIN_ROLES if username in self.admin_users else USER_ROLES
        _identity_headers(req, username, None, roles)
        return None

    def _authenticate(self, req):
        """The user name the request proves, else None, logged once."""
        credentials = _basic_credentials(req)
        if credentials is None:
            return None
        username, password = credentials
        try:
            hashes = _read_hashes(self.user_file)
        except OSError as exc:
            LOG.error('HTTP basic authentication: cannot read %s: %s',
                      self.user_file, exc)
            return None
        if self._password_matches(hashes, username, password):
            return username
        LOG.info('HTTP basic authentication failed for user %s',
                 _loggable(username))
        return None

    def _password_matches(self, hashes, username, password):
        crypted = hashes.get(username)
        usable = (crypted is not None and
                  len(password) <= BCRYPT_MAX_PASSWORD_BYTES)
        checked = crypted if usable else self._dummy_hash(hashes.values())
        try:
            matches = bcrypt.checkpw(password[:BCRYPT_MAX_PASSWORD_BYTES],
                                     checked)
        except ValueError:
            LOG.error('HTTP basic authentication: the hash of user %s in '
                      '%s is not a valid bcrypt hash', _loggable(username),
                      self.user_file)
            return False
        return usable and matches

    def _dummy_hash(self, hashes):
        """A hash of nobody's password, at the file's typical cost.

        One per cost, made the first time the file has that typical cost.
        """
        cost = _typical_cost(hashes)
        if cost not in self._dummy_hashes:
            self._dummy_hashes[cost] = bcrypt.hashpw(
                b'', bcrypt.gensalt(rounds=cost))
        return self._dummy_hashes[cost]


def _basic_credentials(req):
    """(user name, password bytes) of a Basic Authorization, else None.

    The header is taken out of the environment, so that nothing below sees
    the password.
    """
    header = req.environ.pop('HTTP_AUTHORIZATION', '')
    scheme, _, token = header.strip().partition(' ')
    if scheme.lower() != 'basic':
        LOG.info('HTTP basic authentication: no Basic credentials')
        return None
    try:
        return basic_auth.parse_token(token.strip())
    except webob.exc.HTTPException:
        # oslo.middleware has logged why, in one line.
        return None


def _read_hashes(user_file):
    """{user name: bcrypt hash} from the htpasswd file; the first wins.

    Lines of other hash types were refused at start-up; one added since is
    skipped, so its user cannot log in.
    """
    hashes = {}
    with open(user_file) as lines:
        for line in lines:
            entry = line.strip()
            if not entry or ':' not in entry:
                continue
            try:
                username, crypted = basic_auth.parse_entry(entry)
            except webob.exc.HTTPException:
                continue
            hashes.setdefault(username, crypted)
    return hashes


def _typical_cost(hashes):
    """The most common cost among ``hashes``; the lower one of a tie.

    Not the highest cost: with most users at 10 and one at 12, a check at
    12 would take four times a wrong password of most users, and tell
    that the user does not exist. The lower one of a tie, since every
    request naming an unknown user pays it.
    """
    counts = collections.Counter(_cost(crypted) for crypted in hashes)
    if not counts:
        return DEFAULT_BCRYPT_COST
    return min(counts, key=lambda cost: (-counts[cost], cost))


def _cost(crypted):
    """The cost of a ``$2b$<cost>$...`` hash; 4 (the least) if unreadable."""
    try:
        return min(max(int(crypted.split(b'$')[2]), 4), 31)
    except (IndexError, ValueError):
        return 4


class RequestContextScope:
    """Give the request an anonymous context for as long as it is served.

    oslo.log names the thread's current oslo.context context in every line,
    and oslo.context keeps the last context created on a thread until the
    next one is: a request that never authenticates (a 401, a version
    document, /healthcheck) would log as the previous request of the same
    thread. This sets a context with only this request's id (and global
    request id) before anything below logs, and puts back what the thread
    had before (normally nothing) once the response is returned.
    """

    def __init__(self, application):
        self.application = application

    def __call__(self, environ, start_response):
        previous = oslo_context.get_current()
        # Created with overwrite=True: it becomes the thread's context.
        nf_context.RequestContext(
            request_id=environ.get(request_id.ENV_REQUEST_ID),
            global_request_id=environ.get(request_id.GLOBAL_REQ_ID),
            overwrite=True)
        try:
            return self.application(environ, start_response)
        finally:
            nf_context.make_current(previous)


class ContextMiddleware(filters.RequestFilter):
    """Build the RequestContext from identity headers; 401 without one."""

    def __init__(self, application, authorizer):
        super().__init__(application)
        self.authorizer = authorizer

    def process_request(self, req):
        if req.environ.get('HTTP_X_IDENTITY_STATUS') != 'Confirmed':
            return fault.client_error(401, AUTH_REQUIRED)
        ctx = nf_context.RequestContext.from_environ(
            req.environ, enforcer=self.authorizer)
        if not ctx.user_id:
            return fault.client_error(401, AUTH_REQUIRED)
        ctx.is_admin = self.authorizer.authorize(
            ctx, 'context_is_admin', {}, fatal=False)
        req.environ[api_request.ENV_CONTEXT] = ctx
        return None
