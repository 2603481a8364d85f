"""os-availability-zone: the zones of the services, with or without hosts.

A listing is two statements whatever the number of hosts: the services,
and the zones of every host in an aggregate with a zone.
"""

from nova_forcedown.api import microversion
from nova_forcedown.api import request as api_request
from nova_forcedown.api.schemas import availability_zones as schemas
from nova_forcedown.api import validation
from nova_forcedown.api.views import availability_zones as views
from nova_forcedown.objects import service as service_obj
from nova_forcedown.policies import availability_zone as policies
from nova_forcedown.servicegroup import zones


# The query is validated before the policy check, as Nova's decorators do.

def list_zones(req):
    validation.query(req, _query_schema(req.version))
    req.context.can(policies.LIST)
    return api_request.json_response(views.zone_list(_zones(req)))


def list_zones_detail(req):
    validation.query(req, _query_schema(req.version))
    req.context.can(policies.DETAIL)
    return api_request.json_response(views.zone_detail(
        _zones(req, is_up=req.is_up)))


ROUTES = {
    '/os-availability-zone': {'GET': list_zones},
    '/os-availability-zone/detail': {'GET': list_zones_detail},
}


def _query_schema(version):
    return (schemas.INDEX_QUERY_V2102 if version.matches(microversion.V2_102)
            else schemas.INDEX_QUERY)


def _zones(req, is_up=None):
    """The zones of every service, API ones included, as Nova counts them."""
    services = service_obj.ServiceList.get_records(req.context)
    service_zones = zones.ServiceZones.load(req.context, req.app.conf)
    return service_zones.availability_zones(services, is_up)
