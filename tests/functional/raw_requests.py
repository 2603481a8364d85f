"""Requests as bytes, handed to a WSGI app the way a server hands them."""

import io
import urllib.parse

import webob


def json_headers(token, version=None):
    """Headers of a JSON request with ``token`` (bytes), as byte pairs."""
    headers = [('X-Auth-Token', token), ('Content-Type', b'application/json')]
    if version:
        headers.append(('OpenStack-API-Version',
                        b'compute ' + version.encode()))
    return headers


def wsgi_environ(method, target, headers=(), body=None):
    """The environ a WSGI server builds for ``target`` (bytes).

    As PEP 3333 says: the path percent-decoded, the query string and the
    header values as sent, each decoded as latin-1. ``headers`` are
    ``(name, bytes)`` pairs; ``body`` is bytes.
    """
    path, _, query = target.partition(b'?')
    environ = webob.Request.blank('/', method=method).environ
    environ['PATH_INFO'] = urllib.parse.unquote_to_bytes(path).decode(
        'latin-1')
    environ['QUERY_STRING'] = query.decode('latin-1')
    for name, value in headers:
        key = name.upper().replace('-', '_')
        if key not in ('CONTENT_TYPE', 'CONTENT_LENGTH'):
            key = 'HTTP_' + key
        environ[key] = value.decode('latin-1')
    if body is not None:
        environ['wsgi.input'] = io.BytesIO(body)
        environ['CONTENT_LENGTH'] = str(len(body))
    return environ
