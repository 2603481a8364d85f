"""POST /servers and DELETE /servers/{id}: a server's start and end.

A create goes as Nova's: body schema of the microversion, policies (the
zone:host form and, from 2.74, host and hypervisor_hostname are an
admin's), the flavor the caller may see, the image (read from the image
service when there is one, :mod:`nova_forcedown.api.images`; else any
UUID), the zone; then the scheduler's choices and one
transaction that places and records every server of the request
(:mod:`nova_forcedown.objects.instance_build`). The answer is 202 with
the first server's id, links and admin password, or the reservation id
when asked; the servers are BUILD until their hosts' agents spawn them,
or ERROR with Nova's fault when nothing fits.

A delete is 204: the host's agent destroys the server, or it is deleted
at once when its host is down (:mod:`nova_forcedown.objects.instance_delete`).
"""

import ipaddress
import re
import secrets

from oslo_utils import uuidutils
import webob.exc

from nova_forcedown.api import images
from nova_forcedown.api import request as api_request
from nova_forcedown.api.controllers import servers
from nova_forcedown.api.schemas import server_create as schemas
from nova_forcedown.api import validation
from nova_forcedown import exception
from nova_forcedown.objects import flavor as flavor_obj
from nova_forcedown.objects import instance as instance_obj
from nova_forcedown.objects import instance_build
from nova_forcedown.objects import instance_delete
from nova_forcedown.objects import service as service_obj
from nova_forcedown.policies import servers as policies
from nova_forcedown.scheduler import host_selection
from nova_forcedown.servicegroup import zones

# Nova's multi_instance_display_name_template.
MULTI_NAME = '%(name)s-%(count)d'
ROOT_DEVICE_NAME = '/dev/vda'
# The longest hostname Nova makes from a server's name (a DNS label).
HOSTNAME_LENGTH = 63

INVALID_FLAVOR = 'Invalid flavorRef provided.'
INVALID_IMAGE = 'Invalid imageRef provided.'
INVALID_KEY = 'Invalid key_name provided.'
ZONE_UNAVAILABLE = 'The requested availability zone is not available'
ZERO_DISK = ('Only volume-backed servers are allowed for flavors with '
             'zero disk.')
COUNT_ORDER = 'min_count must be <= max_count'
AMBIGUOUS_HOSTNAME = ('Unable to allocate a single hostname to multiple '
                      'instances')
DISABLED_FLAVOR = 'Flavor %s could not be found.'


def create_server(req):
    schema = (schemas.CREATE_V20 if req.legacy_v2
              else schemas.schema(req.version))
    body = validation.body(req, schema)['server']
    context = req.context
    context.can(policies.CREATE, {'project_id': context.project_id})
    zone, host, node = _destination(req, body)
    if body.get('networks') not in (None, 'none', 'auto'):
        context.can(policies.CREATE_ATTACH_NETWORK,
                    {'project_id': context.project_id})
    flavor = _flavor(req, body['flavorRef'])
    image = _image(body.get('imageRef'))
    if flavor.root_gb == 0 and image:
        if not context.can(policies.CREATE_ZERO_DISK_FLAVOR,
                           {'project_id': context.project_id}, fatal=False):
            raise webob.exc.HTTPForbidden(explanation=ZERO_DISK)
    if body.get('key_name') is not None:
        # No key pair is ever created here.
        raise webob.exc.HTTPBadRequest(explanation=INVALID_KEY)
    if host is None and node is None:
        # As Nova, not up front for a named host; it must be in the zone
        # when it is placed.
        _check_zone(req, zone)
    count = _count(body)
    if body.get('hostname') and count > 1:
        raise webob.exc.HTTPBadRequest(explanation=AMBIGUOUS_HOSTNAME)
    properties = images.image_properties(req, image, flavor)
    servers_values = _servers(req, body, flavor, image, zone, count,
                              properties)
    try:
        choices = host_selection.build_choices(
            context, req.app.conf, req.app.servicegroup,
            _request_of(servers_values[0]), host=host, node=node)
    except exception.ComputeHostNotFound as exc:
        raise webob.exc.HTTPBadRequest(explanation=exc.message)
    records = instance_build.create(context, choices, servers_values)
    return _created(req, body, records[0])


def delete_server(req):
    delete(req, servers.authorized(req, policies.DELETE))
    return api_request.empty_response(status=204)


def delete(req, server, force=False):
    """Delete ``server``, by its host's agent if that host is up."""
    host_up = bool(server.host) and bool(host_selection.host_is_up(
        req.context, req.app.servicegroup, server.host))
    instance_delete.delete(req.context, server, host_up, force=force,
                           project_id=req.visible_project)


ROUTES = {
    '/servers': {'POST': create_server},
    '/servers/{id}': {'DELETE': delete_server},
}


# ------------------------------------------------------------- the request

def _destination(req, body):
    """(zone, host, node) asked for, once the caller may name them.

    ``zone:host``, ``zone:host:node`` and ``zone::node`` in
    availability_zone name a host (forced_host rule); from 2.74, ``host``
    and ``hypervisor_hostname`` do (requested_destination rule).
    """
    zone, host, node = body.get('availability_zone'), None, None
    if zone and ':' in zone:
        zone, _, rest = zone.partition(':')
        host, _, node = rest.partition(':')
        host, node = host or None, node or None
        if host or node:
            req.context.can(policies.CREATE_FORCED_HOST,
                            {'project_id': req.context.project_id})
    wanted_host = body.get('host')
    wanted_node = body.get('hypervisor_hostname')
    if wanted_host or wanted_node:
        req.context.can(policies.CREATE_REQUESTED_DESTINATION,
                        {'project_id': req.context.project_id})
        host, node = wanted_host or host, wanted_node or node
    return zone or None, host, node


def _flavor(req, ref):
    """The flavor of flavorRef (an id, or a link ending in one)."""
    flavorid = str(ref).rstrip('/').rsplit('/', 1)[-1]
    try:
        flavor = flavor_obj.get_by_flavor_id(req.context, flavorid)
    except exception.FlavorNotFound:
        raise webob.exc.HTTPBadRequest(explanation=INVALID_FLAVOR)
    if flavor.disabled:
        # Nova names the flavor by its row id here.
        raise webob.exc.HTTPBadRequest(explanation=DISABLED_FLAVOR %
                                       flavor.id)
    return flavor


def _image(ref):
    """The image id of imageRef (a UUID, or a link ending in one)."""
    if not ref:
        raise webob.exc.HTTPBadRequest(explanation=INVALID_IMAGE)
    image = str(ref).rstrip('/').rsplit('/', 1)[-1]
    if not uuidutils.is_uuid_like(image):
        raise webob.exc.HTTPBadRequest(explanation=INVALID_IMAGE)
    return image


def _check_zone(req, zone):
    """400 unless ``zone`` is available: an enabled service is in it."""
    if zone is None:
        return
    services = service_obj.ServiceList.get_records(req.context)
    listed = zones.ServiceZones.load(req.context, req.app.conf)
    if zone not in {found.name for found in listed.availability_zones(
            services) if found.available}:
        raise webob.exc.HTTPBadRequest(explanation=ZONE_UNAVAILABLE)


def _count(body):
    """How many servers the request makes: max_count (min_count alone)."""
    low = int(body.get('min_count', 1))
    high = int(body.get('max_count', low))
    if low > high:
        raise webob.exc.HTTPBadRequest(explanation=COUNT_ORDER)
    return high


def _servers(req, body, flavor, image, zone, count, properties):
    """The values of each server of the request."""
    context = req.context
    networks = 'none' if body.get('networks') == 'none' else 'auto'
    common = {
        'project_id': context.project_id, 'user_id': context.user_id,
        'flavor': instance_obj.copy_of_flavor(flavor),
        'instance_type_id': flavor.id, 'image_ref': image,
        'availability_zone': zone,
        'user_metadata': body.get('metadata') or {},
        'reservation_id': instance_obj.reservation_id(),
        'display_description': body.get('description'),
        'access_ip_v4': _address(body.get('accessIPv4')),
        'access_ip_v6': _address(body.get('accessIPv6')),
        'config_drive': _config_drive(body.get('config_drive')),
        'root_device_name': ROOT_DEVICE_NAME,
        # Kept as sent (base64) and shown back, as Nova does.
        'user_data': body.get('user_data'),
        # From 2.52; each server of the request gets them all.
        'tags': body.get('tags') or (),
        'system_metadata': dict(properties, **{
            instance_obj.REQUESTED_NETWORKS: networks})}
    name = body['name']
    made = []
    for index in range(1, count + 1):
        display_name = (name if count == 1 else
                        MULTI_NAME % {'name': name, 'count': index})
        uuid = uuidutils.generate_uuid()
        made.append(dict(common, uuid=uuid, display_name=display_name,
                         hostname=_hostname(body, display_name, uuid)))
    return made


def _address(text):
    """An access IP as Nova keeps it: the address's canonical form.

    ``0000:...:babe:220.12.22.2`` is ``::babe:dc0c:1602``, which also
    fits the column (39 characters) that the long form may not.
    """
    return str(ipaddress.ip_address(text)) if text else None


def _config_drive(value):
    if value is None:
        return ''
    return 'True' if validation.to_bool(value) else ''


def _hostname(body, display_name, uuid):
    """The server's hostname: asked for (2.90), else made from its name."""
    return (body.get('hostname') or sanitized_hostname(display_name) or
            'server-%s' % uuid)


def sanitized_hostname(name):
    """A DNS label made of ``name``, as Nova makes one before 2.90.

    Lower case; spaces and underscores become hyphens; anything but
    letters, digits, dots and hyphens is dropped; dots and hyphens are
    stripped from the ends; at most 63 characters.
    """
    text = name.lower().replace(' ', '-').replace('_', '-')
    text = re.sub(r'[^a-z0-9.-]', '', text)
    return text.strip('.-')[:HOSTNAME_LENGTH].strip('.-')


def _request_of(values):
    """What the scheduler reads of the request: size and zone."""
    need = instance_build.need_of(values['flavor'])
    return host_selection.BuildRequest(
        host=None, availability_zone=values['availability_zone'],
        **need._asdict())


# ---------------------------------------------------------------- the answer

def _created(req, body, record):
    """202: the reservation id when asked, else the first server's id."""
    if validation.to_bool(body.get('return_reservation_id', False)):
        return api_request.json_response(
            {'reservation_id': record.reservation_id}, status=202)
    self_link, bookmark = _links(req, record.uuid)
    server = {'id': record.uuid,
              'links': [{'rel': 'self', 'href': self_link},
                        {'rel': 'bookmark', 'href': bookmark}],
              'OS-DCF:diskConfig': body.get('OS-DCF:diskConfig', 'MANUAL'),
              'security_groups': [
                  {'name': group['name']}
                  for group in body.get('security_groups') or
                  [{'name': 'default'}]]}
    if req.app.conf.api.enable_instance_password:
        server['adminPass'] = body.get('adminPass') or secrets.token_urlsafe(9)
    response = api_request.json_response({'server': server}, status=202)
    response.headers['Location'] = self_link
    return response


def _links(req, uuid):
    self_base, bookmark_base = servers.link_bases(req)
    return ('%s/servers/%s' % (self_base, uuid),
            '%s/servers/%s' % (bookmark_base, uuid))
