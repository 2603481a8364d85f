"""Refuse a request whose path, query string or headers are not UTF-8 text.

A WSGI server hands the application the raw bytes of the path (after
percent-decoding), of the query string and of every header value, each as
a latin-1 ``str``. webob decodes the path and the query string as UTF-8
when a handler first reads them, and a byte sequence that is not UTF-8
then raises deep inside routing or validation. This filter decodes them
once, before anything else reads them, and answers 400 in Nova's JSON
fault instead, at every mount point and before authentication.

What it refuses, besides bytes that are not UTF-8:

* a NUL character in the path or the query string: PostgreSQL cannot hold
  one in text while SQLite and MySQL store it, so letting it through would
  make the answer depend on the database;
* a control character other than a tab in a header value, which RFC 9110
  does not allow there (and CR or LF would split a header that is logged
  or passed on).

Other control characters in the path and the query are Unicode text that
every backend stores and every response escapes; they are looked up like
any other text.
"""

from nova_forcedown.api import fault
from nova_forcedown.api import filters

QUERY_NOT_UTF8 = 'Query string is not UTF-8 encoded'
QUERY_NUL = 'Query string contains a NUL character'
PATH_NOT_UTF8 = 'Request path is not UTF-8 encoded'
PATH_NUL = 'Request path contains a NUL character'
HEADER_NOT_UTF8 = 'Header %s is not UTF-8 encoded'
HEADER_CONTROL = 'Header %s contains a control character'

# Header values: every C0 control but HTAB, and DEL.
_HEADER_CONTROLS = frozenset(chr(code) for code in range(0x20)
                             if code != 0x09) | {'\x7f'}
# Environ keys that carry header values without the HTTP_ prefix.
_UNPREFIXED_HEADERS = {'CONTENT_TYPE': 'Content-Type',
                       'CONTENT_LENGTH': 'Content-Length'}


def _path_problem(req):
    try:
        path = req.script_name + req.path_info
    except UnicodeError:
        # UnicodeDecodeError: bytes that are not UTF-8. UnicodeEncodeError:
        # not even the latin-1 string PEP 3333 asks for (a server or test
        # client that decoded the path itself, replacing what it could
        # not); webob's query string parsing raises the same two.
        return PATH_NOT_UTF8
    return PATH_NUL if '\x00' in path else None


def _query_problem(req):
    try:
        params = list(req.GET.items())
    except UnicodeError:
        return QUERY_NOT_UTF8
    for name, value in params:
        if '\x00' in name or '\x00' in value:
            return QUERY_NUL
    return None


def _header_name(key):
    if key in _UNPREFIXED_HEADERS:
        return _UNPREFIXED_HEADERS[key]
    name = key[len('HTTP_'):].replace('_', '-').title()
    # The name goes into a message and a log line: only a token as
    # servers accept them, never a byte from the client that is not one.
    if name.replace('-', '').isalnum() and name.isascii():
        return name
    return 'of the request'


def _header_problem(environ):
    for key, value in environ.items():
        if not isinstance(value, str) or not (
                key.startswith('HTTP_') or key in _UNPREFIXED_HEADERS):
            continue
        try:
            text = value.encode('latin-1').decode('utf-8')
        except UnicodeError:
            return HEADER_NOT_UTF8 % _header_name(key)
        if not _HEADER_CONTROLS.isdisjoint(text):
            return HEADER_CONTROL % _header_name(key)
    return None


class RequireUTF8(filters.RequestFilter):
    """400 for a path, query string or header that is not UTF-8 text."""

    def process_request(self, req):
        problem = (_path_problem(req) or _query_problem(req) or
                   _header_problem(req.environ))
        if problem:
            return fault.client_error(400, problem)
        return None
