"""Nova's JSON fault bodies, the one place errors become HTTP.

Every error response, whatever its origin and whatever the Accept header,
is ``{"<faultName>": {"code": <int>, "message": "<text>"}}`` as JSON.
"""

from oslo_log import log as logging
from oslo_serialization import jsonutils
import webob
import webob.dec
import webob.exc
import webob.request

from nova_forcedown.api import json_text
from nova_forcedown.api import request as api_request
from nova_forcedown import exception

LOG = logging.getLogger(__name__)

FAULT_NAMES = {
    400: 'badRequest',
    401: 'unauthorized',
    403: 'forbidden',
    404: 'itemNotFound',
    405: 'badMethod',
    409: 'conflictingRequest',
    413: 'overLimit',
    415: 'badMediaType',
    429: 'overLimit',
    501: 'notImplemented',
    503: 'serviceUnavailable',
}

# Domain error category -> HTTP status: every error a request can meet
# derives from one of them (see nova_forcedown.exception).
STATUS_OF = (
    (exception.Forbidden, 403),
    (exception.NotFound, 404),
    (exception.Conflict, 409),
    # Nova has no 412, so no fault name for it: ``computeFault``.
    (exception.PreconditionFailed, 412),
    (exception.Invalid, 400),
    (exception.DatabaseUnavailable, 503),
)

UNEXPECTED_MESSAGE = ('Unexpected API Error. Please report this at '
                      'the nova-forcedown issue tracker and attach the '
                      'API log if possible.')
DATABASE_DOWN_MESSAGE = ('The database is unavailable; try again later.')
BODY_NOT_RECEIVED_MESSAGE = 'The request body was not received in full.'
BODY_TOO_LARGE_MESSAGE = ('The request body is larger than %d bytes, the '
                          'API\'s [wsgi] max_request_body_size.')

# A request body that broke off: the client went away, sent fewer bytes
# than its Content-Length, or a chunk the server could not parse. Any WSGI
# server may report it while the body is read; api/request.read_body gives
# whatever it raises one name, and webob's own error says the same when
# the body is read elsewhere. The client's fault: 400, one INFO line.
_BROKEN_TRANSFERS = (api_request.BodyNotReceived,
                     webob.request.DisconnectionError)


def body(status, message):
    """The JSON fault body, with Nova's fault name for ``status``."""
    name = FAULT_NAMES.get(status, 'computeFault')
    return json_text.dumps({name: {'code': status, 'message': message}})


def response(status, message, headers=()):
    """A JSON fault response with Nova's fault name for ``status``."""
    resp = webob.Response(status=status, content_type='application/json',
                          charset='utf-8')
    resp.body = body(status, message)
    for header, value in headers:
        resp.headers.add(header, value)
    return resp


def client_error(status, message, headers=()):
    """A 4xx fault, logged as one INFO line and never with a traceback.

    The request id, user and project come from oslo.log's context; the
    message may quote the client's input, so it is logged escaped.
    """
    LOG.info('Client error %(status)d: %(message)s',
             {'status': status, 'message': loggable(message)})
    return response(status, message, headers)


def loggable(text):
    """``text`` on one line: control characters and surrogates escaped."""
    return repr(str(text))[1:-1]


def from_http_exception(exc):
    """A webob HTTP error as a JSON fault, keeping Allow and similar."""
    headers = [(name, value) for name, value in exc.headers.items()
               if name.lower() in ('allow', 'retry-after', 'location',
                                   'www-authenticate')]
    message = exc.explanation or exc.title
    if exc.code < 500:
        return client_error(exc.code, message, headers)
    return response(exc.code, message, headers)


def from_domain_exception(exc):
    for cls, status in STATUS_OF:
        if isinstance(exc, cls):
            if status < 500:
                return client_error(status, str(exc))
            return response(status, str(exc))
    return None


def from_exception(exc):
    """Any exception raised while handling a request, as a fault."""
    if isinstance(exc, webob.exc.HTTPException):
        return from_http_exception(exc)
    if isinstance(exc, exception.DatabaseUnavailable):
        LOG.error('Database unavailable while handling a request: %s',
                  exception.first_line(exc))
        return response(503, DATABASE_DOWN_MESSAGE)
    if isinstance(exc, exception.NovaForcedownException):
        resp = from_domain_exception(exc)
        if resp is not None:
            return resp
    if isinstance(exc, _BROKEN_TRANSFERS):
        cause = exc.__cause__ or exc
        LOG.info('Request body not received in full: %s: %s',
                 type(cause).__name__, loggable(cause)[:300])
        return response(400, BODY_NOT_RECEIVED_MESSAGE)
    LOG.exception('Unexpected error while handling a request')
    return response(500, UNEXPECTED_MESSAGE)


class FaultWrapper:
    """Outermost error boundary: exceptions and non-JSON errors to faults.

    Inner middleware (size limit, auth) may answer an error with webob's
    HTML or plain text; those are re-rendered as JSON faults here.
    """

    def __init__(self, application):
        self.application = application

    @webob.dec.wsgify
    def __call__(self, req):
        try:
            resp = req.get_response(self.application)
        except Exception as exc:  # noqa: the boundary catches everything
            return from_exception(exc)
        if resp.status_code >= 400 and not _is_fault(resp):
            return _rerender(resp)
        return resp


def _json_body(resp):
    if resp.content_type != 'application/json':
        return None
    try:
        return jsonutils.loads(resp.body)
    except ValueError:
        return None


def _is_fault(resp):
    body = _json_body(resp)
    if not isinstance(body, dict) or len(body) != 1:
        return False
    detail = next(iter(body.values()))
    return isinstance(detail, dict) and {'code', 'message'} <= set(detail)


def _rerender(resp):
    fault = response(resp.status_code, _message_of(resp))
    for header, value in resp.headerlist:
        if header.lower() not in ('content-type', 'content-length'):
            fault.headers.add(header, value)
    return fault


def _message_of(resp):
    """The message of a foreign error body, else the status title."""
    body = _json_body(resp)
    if isinstance(body, dict):
        for detail in body.values():
            if isinstance(detail, dict) and detail.get('message'):
                return str(detail['message'])
    return resp.status.split(' ', 1)[-1]
