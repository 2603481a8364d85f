"""/servers/{id}/migrations (from 2.23): a server's live migrations.

Nova lists the live migrations in progress of a server, and shows one.
Nothing here live-migrates (a server moves only by evacuation), so the
list is always empty and every show a 404, with the reason Nova gives:
the id is one of the server's evacuations (not a live migration), or
none of its migrations. The server (404) and the policy (403) come
first, as in Nova.
"""

import webob.exc

from nova_forcedown.api.controllers import servers
from nova_forcedown.api import microversion
from nova_forcedown.api import request as api_request
from nova_forcedown.objects import migration as migration_obj
from nova_forcedown.policies import server_migrations as policies


@microversion.added_in(microversion.V2_23)
def list_server_migrations(req):
    servers.authorized(req, policies.INDEX)
    return api_request.json_response({'migrations': []})


@microversion.added_in(microversion.V2_23)
def show_server_migration(req):
    server = servers.authorized(req, policies.SHOW)
    wanted = req.urlvars['migration_id']
    names = {'id': wanted, 'uuid': server.uuid}
    if wanted in _migration_ids(req, server):
        raise webob.exc.HTTPNotFound(
            explanation='Migration %(id)s for server %(uuid)s is not '
                        'live-migration.' % names)
    raise webob.exc.HTTPNotFound(
        explanation='In-progress live migration %(id)s is not found for '
                    'server %(uuid)s.' % names)


ROUTES = {
    '/servers/{id}/migrations': {'GET': list_server_migrations},
    '/servers/{id}/migrations/{migration_id}': {
        'GET': show_server_migration},
}


def _migration_ids(req, server):
    """The ids of the server's migrations (evacuations), as text."""
    return {str(migration.id) for migration in migration_obj.get_all(
        req.context, exact={'instance_uuid': server.uuid})}
