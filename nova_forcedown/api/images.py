"""A new server's image, read from the image service as Nova reads it.

Where there is an image service (in the catalog of the caller's Keystone
token, or at ``[glance] endpoint_override``), ``GET /v2/images/{id}``
must find the image active, and the flavor must hold its ``min_ram``,
``min_disk`` and size, or the create is refused with Nova's 400. Its
properties are kept with the server, as Nova keeps them
(``image_<name>`` in its system metadata). Where there is none, any UUID
is an image with no properties. An image service that does not answer
is 503, never a server built on an image nobody checked.
"""

from keystoneauth1 import exceptions as ks_exc
from keystoneauth1 import loading as ks_loading
from oslo_log import log as logging
from oslo_utils import units
import webob.exc

LOG = logging.getLogger(__name__)

GROUP = 'glance'
# The WSGI environ key keystonemiddleware puts the caller's token in, as
# an auth plugin with its catalog.
TOKEN_AUTH = 'keystone.token_auth'
# What a server's system metadata keeps of its image, as Nova's does.
PREFIX = 'image_'
# Fields of Glance's image record that are not properties of the image.
_NOT_PROPERTIES = frozenset((
    'id', 'name', 'status', 'visibility', 'size', 'virtual_size',
    'checksum', 'os_hash_algo', 'os_hash_value', 'created_at',
    'updated_at', 'tags', 'self', 'file', 'schema', 'owner', 'protected',
    'os_hidden', 'locations', 'direct_url', 'stores'))

NOT_FOUND = 'Can not find requested image'
NOT_ACTIVE = 'Image %s is not active.'
MEMORY_TOO_SMALL = "Flavor's memory is too small for requested image."
DISK_TOO_SMALL = "Flavor's disk is too small for requested image."
UNAVAILABLE = 'The image service is unavailable (%s); try again later.'

# One keystoneauth1 session per configuration: its connection pool is
# shared by every request of the process.
_SESSIONS = {}


def image_properties(req, image_id, flavor):
    """{image_<name>: value} of ``image_id``, once Nova's checks pass.

    {} when there is no image service to read it from.
    """
    image = _read(req, image_id)
    if image is None:
        return {}
    _check(image, image_id, flavor)
    return {PREFIX + name: str(value) for name, value in image.items()
            if name not in _NOT_PROPERTIES and value is not None}


def _read(req, image_id):
    """Glance's record of the image; None without an image service."""
    service = _adapter(req)
    if service is None:
        return None
    try:
        response = service.get('/v2/images/%s' % image_id, raise_exc=False)
    except ks_exc.EndpointNotFound:
        return None
    except ks_exc.ClientException as exc:
        raise _unavailable(type(exc).__name__)
    if response.status_code == 404:
        raise webob.exc.HTTPBadRequest(explanation=NOT_FOUND)
    if response.status_code != 200:
        raise _unavailable('HTTP %d' % response.status_code)
    try:
        return response.json()
    except ValueError:
        raise _unavailable('not JSON')


def _unavailable(why):
    LOG.warning('Cannot read an image from the image service: %s.', why)
    return webob.exc.HTTPServiceUnavailable(explanation=UNAVAILABLE % why)


def _adapter(req):
    """An adapter on the image service as the caller, or None.

    With the caller's Keystone token its catalog names the endpoint;
    without (``noauth2``, ``http_basic``), only ``endpoint_override``
    does, read with no token.
    """
    conf = req.app.conf
    auth = req.environ.get(TOKEN_AUTH)
    if auth is None and not conf[GROUP].endpoint_override:
        return None
    return ks_loading.load_adapter_from_conf_options(
        conf, GROUP, session=_session(conf), auth=auth)


def _session(conf):
    session = _SESSIONS.get(id(conf))
    if session is None:
        session = _SESSIONS.setdefault(
            id(conf), ks_loading.load_session_from_conf_options(conf, GROUP))
    return session


def _check(image, image_id, flavor):
    """Nova's refusals of an image for ``flavor`` (a FlavorRow)."""
    if image.get('status') != 'active':
        raise webob.exc.HTTPBadRequest(explanation=NOT_ACTIVE % image_id)
    if int(image.get('min_ram') or 0) > flavor.memory_mb:
        raise webob.exc.HTTPBadRequest(explanation=MEMORY_TOO_SMALL)
    root_bytes = flavor.root_gb * units.Gi
    if flavor.root_gb and (
            int(image.get('size') or 0) > root_bytes or
            int(image.get('min_disk') or 0) > flavor.root_gb):
        raise webob.exc.HTTPBadRequest(explanation=DISK_TOO_SMALL)
