"""GET /os-services/{service_id}/history: the audit trail of a service.

Not a Nova API, so no microversion gates it: the same answer at every
version. Who forced the service down or cleared that, disabled or
enabled it, when, by which request and what changed; newest first,
paged with ``limit`` (up to ``[api] max_limit``) and ``marker`` (the id
of the last entry seen).
"""

from oslo_utils import uuidutils
import webob.exc

from nova_forcedown.api import request as api_request
from nova_forcedown.api.schemas import service_history as schemas
from nova_forcedown.api import validation
from nova_forcedown.api.views import service_history as views
from nova_forcedown import exception
from nova_forcedown.objects import service as service_obj
from nova_forcedown.objects import service_history
from nova_forcedown.policies import services as policies


def list_history(req):
    params = validation.query(req, schemas.HISTORY_QUERY)
    req.context.can(policies.HISTORY)
    service = _service(req, req.urlvars['id'])
    limit = req.page_size(validation.last(params, 'limit'))
    entries = service_history.get_for_host(
        req.context, service.host, binary=service.binary, limit=limit,
        marker=_marker(params))
    links = req.next_links(entries, limit, lambda entry: entry.id)
    return api_request.listing_response(
        'history', entries,
        lambda record: views.entry(record, service_history.changes(record)),
        {'history_links': links} if links else None)


ROUTES = {
    '/os-services/{id}/history': {'GET': list_history},
}


def _marker(params):
    """The marker's entry id; no entry has an id past every row's."""
    marker = validation.last(params, 'marker')
    if marker is None:
        return None
    entry_id = validation.db_integer(marker)
    if entry_id is None:
        raise exception.MarkerNotFound(marker=marker)
    return entry_id


def _service(req, service_id):
    if not uuidutils.is_uuid_like(service_id):
        raise webob.exc.HTTPBadRequest(
            explanation='Invalid uuid %s' % service_id)
    try:
        return service_obj.Service.get_by_uuid(req.context, service_id)
    except exception.ServiceNotFound:
        raise webob.exc.HTTPNotFound(
            explanation='Service %s not found.' % service_id)
