"""The request handlers see: webob's, plus who asks and at what version."""

import itertools
import tempfile
import urllib.parse
import wsgiref.util

import webob
import webob.exc

from nova_forcedown.api import integers
from nova_forcedown.api import json_text

ENV_CONTEXT = 'nova_forcedown.context'
ENV_VERSION = 'nova_forcedown.version'
ENV_APP = 'nova_forcedown.app'
# The /v2 or /v2.1 prefix the root map moved into SCRIPT_NAME.
ENV_MOUNT = 'nova_forcedown.mount'
# The servicegroup's is_up of this request (one backend read for all).
ENV_LIVENESS = 'nova_forcedown.liveness'


class AppState:
    """What every handler of one API app shares, built once at start-up."""

    def __init__(self, conf, servicegroup_api, extensions, legacy_v2=False):
        self.conf = conf
        self.servicegroup = servicegroup_api
        self.extensions = extensions
        self.legacy_v2 = legacy_v2

    def extension_enabled(self, alias):
        return any(ext['alias'] == alias for ext in self.extensions)


class Request(webob.Request):

    @property
    def context(self):
        return self.environ[ENV_CONTEXT]

    @property
    def version(self):
        return self.environ[ENV_VERSION]

    @property
    def app(self):
        return self.environ[ENV_APP]

    @property
    def legacy_v2(self):
        return self.app.legacy_v2

    @property
    def visible_project(self):
        """The project whose servers the caller sees; None: every one.

        Admins see any project's server; others only their own, as
        Nova's project-only database queries allow.
        """
        context = self.context
        return None if context.is_admin else context.project_id

    def page_size(self, limit_text):
        """A listing's page size: ``limit`` up to [api] max_limit.

        No limit, or 0, is max_limit, as Nova pages. ``limit_text`` is
        digits, as many as the client sent (the query schema checked).
        """
        max_limit = self.app.conf.api.max_limit
        limit = integers.read(limit_text) if limit_text is not None else 0
        return min(limit or max_limit, max_limit)

    @property
    def is_up(self):
        """The servicegroup's ``is_up(service)`` for this request.

        Its backend, if it has one, is read once for the whole request,
        when it first judges a service. It is the servicegroup's own
        function, so whatever it is handed to (a view, a host-wide
        operation) calls the servicegroup, not the API.
        """
        is_up = self.environ.get(ENV_LIVENESS)
        if is_up is None:
            is_up = self.environ[ENV_LIVENESS] = (
                self.app.servicegroup.liveness())
        return is_up

    def link_base(self):
        """Base URL of this API for links: the configured prefix or ours."""
        prefix = self.app.conf.api.compute_link_prefix
        if prefix:
            return prefix.rstrip('/') + self.script_name
        return self.application_url

    def next_links(self, page, limit, marker_of, query=None):
        """Nova's link to the page after ``page`` when it is full, or None.

        The link is this path with ``query`` ({name: value}; by default
        ``limit`` alone) and the marker ``marker_of(last record)``, the
        parameters in name order.
        """
        if not limit or len(page) != limit:
            return None
        query = dict({'limit': limit} if query is None else query,
                     marker=marker_of(page[-1]))
        return [{'rel': 'next', 'href': '%s%s?%s' % (
            self.link_base(), self.path_info,
            urllib.parse.urlencode(sorted(query.items())))}]


class BodyNotReceived(Exception):
    """The request body broke off while it was read (api/fault: 400)."""


def read_body(req):
    """The request body as bytes; read it only through here.

    The WSGI server reads the body from the client as the application asks
    for it, and each server reports a body that breaks off its own way:
    webob's DisconnectionError when fewer bytes come than Content-Length
    announced, an OSError from uWSGI, a parse error from gunicorn for a
    chunk it cannot read. All of them become BodyNotReceived, a client
    error. An HTTP error raised while reading (the size limit's 413 for a
    chunked body that grows too long) goes through unchanged.
    """
    try:
        return req.body
    except webob.exc.HTTPException:
        raise
    except Exception as exc:  # noqa: whatever the server's stream raises
        raise BodyNotReceived(str(exc)) from exc


def json_response(body, status=200):
    resp = webob.Response(status=status, content_type='application/json',
                          charset='utf-8')
    resp.body = json_text.dumps(body)
    return resp


# Items rendered and encoded at a time by listing_response.
LISTING_CHUNK = 500
# Bytes of a listing kept in memory; past them its text goes to a file.
# As much as waitress keeps of a response in memory (the worker's
# outbuf_overflow): the worker sends a listing from this file, and a client
# that reads slowly holds no more memory than with any other response.
LISTING_SPOOL_BYTES = 64 * 1024
# Bytes read from that file at a time while it is sent.
_SPOOL_BLOCK = 64 * 1024


def listing_response(key, records, render, extra=None):
    """``{key: [render(record), ...], **extra}`` as a JSON response.

    The same document json_response would send, rendered and encoded
    LISTING_CHUNK items at a time from any iterable of records: a listing
    of a hundred thousand hosts never holds all its item dicts, nor its
    whole text as both str and bytes, at once, and records read from a
    database cursor as they are rendered are never all held either.
    Everything is encoded before the response is returned, so an error
    still becomes a fault, not a truncated body.
    """
    body = tempfile.SpooledTemporaryFile(max_size=LISTING_SPOOL_BYTES)
    try:
        _write_listing(body, key, records, render, extra)
    except BaseException:
        body.close()
        raise
    size = body.tell()
    body.seek(0)
    resp = webob.Response(content_type='application/json', charset='utf-8')
    if size <= LISTING_SPOOL_BYTES:
        # Still in memory: sent as any other body.
        with body:
            resp.body = body.read()
        return resp
    # The WSGI server closes it once sent, or when the client goes away.
    resp.app_iter = wsgiref.util.FileWrapper(body, _SPOOL_BLOCK)
    # After the app_iter, which makes webob forget any length: without
    # one, the listing would go out in chunked transfer encoding.
    resp.content_length = size
    return resp


def _write_listing(body, key, records, render, extra):
    """Write the document, rendering LISTING_CHUNK records at a time.

    The text stays in memory up to LISTING_SPOOL_BYTES, then goes to an
    anonymous temporary file, which the API's worker hands to waitress to
    send as it is (wsgi/worker.py): holding all of it in memory would make
    a worker as large as its largest listing (65 MB of text for 100,000
    hypervisor details at 2.1), and a slow client would hold that memory
    until it had read it all.
    """
    body.write(b'{' + json_text.dumps(key) + b': [')
    records = iter(records)
    first = True
    while True:
        items = [render(record)
                 for record in itertools.islice(records, LISTING_CHUNK)]
        if not items:
            break
        if not first:
            body.write(b', ')
        body.write(json_text.dumps(items)[1:-1])
        first = False
    body.write(b']')
    for name, value in (extra or {}).items():
        body.write(b', ' + json_text.dumps(name) + b': ' +
                   json_text.dumps(value))
    body.write(b'}')


def empty_response(status=204):
    resp = webob.Response(status=status)
    resp.content_type = None
    return resp
