"""/servers/{id}/metadata: a server's key/value pairs, as in Nova.

Each handler: body (400), the server (404, also another project's for a
non-admin), the policy against the server's project (403), then the
change, whose conflicts (409) and limit (403) the operation decides.
Writes answer 200 with the metadata as it now is (POST, PUT) or the item
set (PUT of one key); a delete answers 204.
"""

import webob.exc

from nova_forcedown.api import request as api_request
from nova_forcedown.api.controllers import servers
from nova_forcedown.api.schemas import server_metadata as schemas
from nova_forcedown.api import validation
from nova_forcedown import exception
from nova_forcedown.objects import instance_metadata
from nova_forcedown.policies import server_metadata as policies


def list_metadata(req):
    server = servers.authorized(req, policies.INDEX)
    return api_request.json_response({'metadata': server.user_metadata})


def show_metadata_item(req):
    server = servers.authorized(req, policies.SHOW)
    key = req.urlvars['key']
    if key not in server.user_metadata:
        raise exception.MetadataItemNotFound()
    return api_request.json_response(
        {'meta': {key: server.user_metadata[key]}})


def merge_metadata(req):
    return _update_all(req, policies.CREATE, replace=False)


def replace_metadata(req):
    return _update_all(req, policies.UPDATE_ALL, replace=True)


def set_metadata_item(req):
    item = validation.body(req, schemas.META)['meta']
    server = servers.authorized(req, policies.UPDATE)
    if req.urlvars['key'] not in item:
        raise webob.exc.HTTPBadRequest(
            explanation='Request body and URI mismatch')
    _update(req, server, item, replace=False)
    return api_request.json_response({'meta': item})


def delete_metadata_item(req):
    server = servers.authorized(req, policies.DELETE)
    instance_metadata.delete_item(req.context, server.uuid,
                                  req.urlvars['key'],
                                  project_id=req.visible_project)
    return api_request.empty_response(status=204)


_METADATA = '/servers/{id}/metadata'
ROUTES = {
    _METADATA: {'GET': list_metadata, 'POST': merge_metadata,
                'PUT': replace_metadata},
    _METADATA + '/{key}': {'GET': show_metadata_item,
                           'PUT': set_metadata_item,
                           'DELETE': delete_metadata_item},
}


def _update_all(req, rule, replace):
    metadata = validation.body(req, schemas.METADATA)['metadata']
    server = servers.authorized(req, rule)
    return api_request.json_response(
        {'metadata': _update(req, server, metadata, replace)})


def _update(req, server, metadata, replace):
    return instance_metadata.update(
        req.context, server.uuid, metadata,
        req.app.conf.quota.metadata_items, replace=replace,
        project_id=req.visible_project)
