"""Version discovery documents, served without authentication.

``/`` lists v2.0 and v2.1; ``/v2`` and ``/v2.1`` (with or without the
trailing slash) describe one version each; any other path on the root
answers 300 with the choices, as Nova does.
"""

import webob.dec

from nova_forcedown.api import microversion
from nova_forcedown.api import request as api_request

MEDIA_TYPE = 'application/vnd.openstack.compute+json;version=%s'

VERSIONS = {
    'v2.0': {'id': 'v2.0', 'status': 'DEPRECATED', 'version': '',
             'min_version': '', 'updated': '2025-07-04T12:00:00Z',
             'path': 'v2/', 'media_version': '2'},
    'v2.1': {'id': 'v2.1', 'status': 'CURRENT',
             'version': str(microversion.MAX_VERSION),
             'min_version': str(microversion.MIN_VERSION),
             'updated': '2013-07-23T11:33:21Z', 'path': 'v2.1/',
             'media_version': '2.1'},
}


def _base_url(req):
    """The configured link prefix, else the root this API is served at.

    SCRIPT_NAME is kept (a mount point, or the prefix a trusted proxy names
    in X-Forwarded-Prefix), less the /v2 or /v2.1 the root map mounted.
    """
    prefix = req.environ.get('nova_forcedown.link_prefix')
    if prefix:
        return prefix.rstrip('/') + '/'
    script = req.script_name
    mount = req.environ.get(api_request.ENV_MOUNT, '')
    if mount and script.endswith(mount):
        script = script[:-len(mount)]
    return (req.host_url + script).rstrip('/') + '/'


def _summary(version, base):
    return {'id': version['id'], 'status': version['status'],
            'version': version['version'],
            'min_version': version['min_version'],
            'updated': version['updated'],
            'links': [{'rel': 'self', 'href': base + version['path']}]}


def _document(version, base):
    doc = _summary(version, base)
    doc['links'].append({'rel': 'describedby', 'type': 'text/html',
                         'href': 'http://docs.openstack.org/'})
    doc['media-types'] = [{'base': 'application/json',
                           'type': MEDIA_TYPE % version['media_version']}]
    return doc


def _choices(req, base):
    path = req.path_info.lstrip('/')
    return {'choices': [
        {'id': version['id'], 'status': version['status'],
         'links': [{'rel': 'self', 'href': base + version['path'] + path}],
         'media-types': [{'base': 'application/json',
                          'type': MEDIA_TYPE % version['media_version']}]}
        for version in VERSIONS.values()]}


@webob.dec.wsgify
def root(req):
    base = _base_url(req)
    if req.path_info in ('', '/'):
        return api_request.json_response({'versions': [
            _summary(VERSIONS[key], base) for key in sorted(VERSIONS)]})
    return api_request.json_response(_choices(req, base), status=300)


def version_app(version_id):
    """A WSGI app answering one version's document."""
    @webob.dec.wsgify
    def app(req):
        return api_request.json_response(
            {'version': _document(VERSIONS[version_id], _base_url(req))})
    return app


def show_v21(req):
    return api_request.json_response(
        {'version': _document(VERSIONS['v2.1'], _base_url(req))})


ROUTES = {
    '/versions/v2.1': {'GET': show_v21},
}
