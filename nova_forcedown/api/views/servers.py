"""Server views: pure functions of a server record and what the request
decided once (microversion, policies, links, the hosts' services and
zones), as Nova renders them at each microversion.

A listing renders thousands of servers with one :class:`Servers`.
"""

import hashlib

from nova_forcedown.api import microversion
from nova_forcedown.objects import host_zones
from nova_forcedown.objects import base
from nova_forcedown.objects import instance_status
from nova_forcedown.servicegroup import host_status as host_status_rules

DISK_CONFIG = 'MANUAL'
# The code of the faults whose details (a traceback) only admins see.
FAULT_HIDDEN_CODE = 500
# What a cache holds for a key it has not seen (None is a value).
_UNSEEN = object()


# Nova's system metadata names an image property "image_<property>".
IMAGE_PROPERTY_PREFIX = 'image_'
# What it keeps there of the image itself, which no view shows as a
# property.
IMAGE_ATTRIBUTES = frozenset(('base_image_ref', 'container_format',
                              'disk_format', 'min_disk', 'min_ram'))
# Nova hides a server's addresses while it is being built.
BUILDING = 'building'


def server_time(value):
    """created / updated: seconds and a Z, as Nova shows them."""
    if value is None:
        return None
    if value.tzinfo is not None:
        value = value.replace(tzinfo=None)
    # The text of strftime('%Y-%m-%dT%H:%M:%SZ') at a fraction of its cost.
    return value.isoformat(timespec='seconds') + 'Z'


def host_id(project_id, host):
    """Nova's hostId: one value per project and host.

    It tells other projects nothing about the host.
    """
    if not host:
        return ''
    return hashlib.sha224(
        ((project_id or '') + host).encode('utf-8')).hexdigest()


class ServerOptions:
    """What a request decides once for all its servers.

    ``extended``: the OS-EXT-SRV-ATTR attributes are shown; ``host_status``:
    'all', 'unknown-only' or None; ``extra_specs``: the embedded flavor
    shows its extra specs; ``links``: (self base, bookmark base) URLs;
    ``services``: {host: nova-compute service}; ``is_up``: servicegroup
    liveness; ``zones``: the HostZones of the servers' hosts; ``faults``:
    {uuid: the newest fault} of the servers in error; ``fault_details``:
    the details of a 500 fault are shown (to admins); ``tags``: {uuid:
    [tag, ...]} of the servers that have tags (2.26).
    """

    def __init__(self, extended=False, host_status=None, extra_specs=False,
                 links=('', ''), services=None, is_up=None, zones=None,
                 faults=None, fault_details=False, tags=None):
        self.extended = extended
        self.host_status = host_status
        self.extra_specs = extra_specs
        self.self_base, self.bookmark_base = links
        self.services = services or {}
        self.is_up = is_up
        self.zones = zones or host_zones.HostZones({}, '')
        self.faults = faults or {}
        self.fault_details = fault_details
        self.tags = tags or {}


class Servers:
    """The views of one request: ``brief``, ``detail`` and ``show``.

    What many servers share (a host's status, an image, a flavor copy) is
    rendered once per request; servers share those parts of their views,
    which are only encoded.
    """

    def __init__(self, version, options):
        self.options = options
        self._host_statuses = {}
        self._images = {}
        # id(flavor copy) -> (that copy, its view); the copy is kept so
        # that its id is not reused.
        self._flavors = {}
        # The empty values of every view: each would otherwise be one more
        # object per server for the garbage collector to scan.
        self._no_dict = {}
        self._no_list = []
        self.v2_3 = version.matches(microversion.V2_3)
        self.v2_9 = version.matches(microversion.V2_9)
        self.v2_16 = version.matches(microversion.V2_16)
        self.v2_19 = version.matches(microversion.V2_19)
        self.v2_26 = version.matches(microversion.V2_26)
        self.v2_47 = version.matches(microversion.V2_47)
        self.v2_63 = version.matches(microversion.V2_63)
        self.v2_71 = version.matches(microversion.V2_71)
        self.v2_73 = version.matches(microversion.V2_73)
        self.v2_90 = version.matches(microversion.V2_90)
        self.v2_96 = version.matches(microversion.V2_96)
        self.v2_98 = version.matches(microversion.V2_98)
        self.v2_100 = version.matches(microversion.V2_100)

    def links(self, server):
        path = '/servers/' + server.uuid
        return [{'rel': 'self', 'href': self.options.self_base + path},
                {'rel': 'bookmark',
                 'href': self.options.bookmark_base + path}]

    def brief(self, server):
        return {'id': server.uuid, 'name': server.display_name or '',
                'links': self.links(server)}

    def show(self, server):
        view = self.detail(server)
        if self.v2_71:
            view['server_groups'] = []
        return view

    def detail(self, server):
        status = instance_status.status(server.vm_state, server.task_state,
                                        deleted=bool(server.deleted))
        # One dict literal, brief's keys first: a listing builds thousands.
        view = {
            'id': server.uuid, 'name': server.display_name or '',
            'links': self.links(server),
            'status': status,
            'tenant_id': server.project_id or '',
            'user_id': server.user_id or '',
            'metadata': server.user_metadata or self._no_dict,
            'hostId': host_id(server.project_id, server.host),
            'image': self._image(server),
            'flavor': self._flavor(server),
            'created': server_time(server.created_at),
            'updated': server_time(server.updated_at or server.created_at),
            'addresses': self._addresses(server),
            'accessIPv4': server.access_ip_v4 or '',
            'accessIPv6': server.access_ip_v6 or '',
            'OS-DCF:diskConfig': DISK_CONFIG,
            'OS-EXT-AZ:availability_zone': self._zone(server),
            'config_drive': server.config_drive or '',
            'key_name': server.key_name,
            'OS-SRV-USG:launched_at': base.timestamp(server.launched_at),
            'OS-SRV-USG:terminated_at': base.timestamp(server.terminated_at),
            'OS-EXT-STS:task_state': server.task_state,
            'OS-EXT-STS:vm_state': server.vm_state,
            'OS-EXT-STS:power_state': server.power_state or 0,
            'os-extended-volumes:volumes_attached': self._no_list,
        }
        if status in instance_status.WITH_PROGRESS:
            view['progress'] = server.progress or 0
        if status in instance_status.WITH_FAULT:
            fault = self.options.faults.get(server.uuid)
            if fault is not None:
                view['fault'] = self._fault(fault)
        self._add_extended(server, view)
        self._add_by_version(server, view)
        return view

    def _fault(self, fault):
        """Nova's fault: details of a 500 for admins only, none if empty."""
        view = {'code': fault.code, 'created': server_time(fault.created_at),
                'message': fault.message or ''}
        if fault.details and (self.options.fault_details or
                              fault.code != FAULT_HIDDEN_CODE):
            view['details'] = fault.details
        return view

    def _add_extended(self, server, view):
        if self.options.extended:
            view['OS-EXT-SRV-ATTR:host'] = server.host
            view['OS-EXT-SRV-ATTR:hypervisor_hostname'] = server.node
            view['OS-EXT-SRV-ATTR:instance_name'] = 'instance-%08x' % (
                server.id)
            if self.v2_3:
                view['OS-EXT-SRV-ATTR:hostname'] = server.hostname or ''
                view['OS-EXT-SRV-ATTR:kernel_id'] = ''
                view['OS-EXT-SRV-ATTR:launch_index'] = 0
                view['OS-EXT-SRV-ATTR:ramdisk_id'] = ''
                view['OS-EXT-SRV-ATTR:reservation_id'] = (
                    server.reservation_id or '')
                view['OS-EXT-SRV-ATTR:root_device_name'] = (
                    server.root_device_name)
                view['OS-EXT-SRV-ATTR:user_data'] = server.user_data
        elif self.v2_90:
            view['OS-EXT-SRV-ATTR:hostname'] = server.hostname or ''

    def _add_by_version(self, server, view):
        if self.v2_9:
            view['locked'] = server.locked_by is not None
        if self.v2_16:
            shown = self._host_status(server)
            if shown is not None:
                view['host_status'] = shown
        if self.v2_19:
            view['description'] = server.display_description
        if self.v2_26:
            view['tags'] = self.options.tags.get(server.uuid,
                                                 self._no_list)
        if self.v2_63:
            view['trusted_image_certificates'] = None
        if self.v2_73:
            view['locked_reason'] = server.locked_reason
        if self.v2_96:
            view['pinned_availability_zone'] = None
        if self.v2_100:
            view['scheduler_hints'] = self._no_dict

    def _host_status(self, server):
        if self.options.host_status is None:
            return None
        shown = self._host_statuses.get(server.host, _UNSEEN)
        if shown is _UNSEEN:
            shown = self._host_statuses[server.host] = self._host_status_of(
                server.host)
        return shown

    def _host_status_of(self, host):
        shown = host_status_rules.host_status(
            self.options.services.get(host) if host else None,
            self.options.is_up)
        if (self.options.host_status == 'all' or
                shown == host_status_rules.UNKNOWN):
            return shown
        return None

    def _zone(self, server):
        if server.host:
            return self.options.zones.of(server.host)
        return server.availability_zone or ''

    def _addresses(self, server):
        """{network: [address]}, extended as Nova's detail views are."""
        if not server.network_info or server.vm_state == BUILDING:
            return self._no_dict
        addresses = {}
        for port in server.network_info:
            addresses.setdefault(port['network'], []).append({
                'version': port['version'], 'addr': port['address'],
                'OS-EXT-IPS:type': port['type'],
                'OS-EXT-IPS-MAC:mac_addr': port['mac_address']})
        return addresses

    def _image(self, server):
        """The image's id and link; from 2.98 its properties too.

        Servers of one image with the same properties (one dict in the
        records of a listing) share one view.
        """
        if not server.image_ref:
            return ''
        properties = server.system_metadata if self.v2_98 else None
        key = (server.image_ref, id(properties))
        cached = self._images.get(key)
        if cached is not None and cached[0] is properties:
            return cached[1]
        view = self._image_of(server.image_ref, properties)
        self._images[key] = (properties, view)
        return view

    def _image_of(self, image_ref, properties):
        view = {'id': image_ref, 'links': [{
            'rel': 'bookmark',
            'href': '%s/images/%s' % (self.options.bookmark_base,
                                      image_ref)}]}
        if self.v2_98:
            view['properties'] = _image_properties(properties or {})
        return view

    def _flavor(self, server):
        flavor = server.flavor
        cached = self._flavors.get(id(flavor))
        if cached is not None and cached[0] is flavor:
            return cached[1]
        view = self._flavor_of(flavor)
        self._flavors[id(flavor)] = (flavor, view)
        return view

    def _flavor_of(self, flavor):
        if self.v2_47:
            if not flavor:
                return {}
            view = {'vcpus': flavor['vcpus'], 'ram': flavor['memory_mb'],
                    'disk': flavor['root_gb'],
                    'ephemeral': flavor['ephemeral_gb'],
                    'swap': flavor['swap'], 'original_name': flavor['name']}
            if self.options.extra_specs:
                view['extra_specs'] = flavor.get('extra_specs', {})
            return view
        flavor_id = (flavor or {}).get('flavorid', '')
        return {'id': flavor_id, 'links': [{
            'rel': 'bookmark',
            'href': '%s/flavors/%s' % (self.options.bookmark_base,
                                       flavor_id)}]}


def _image_properties(system_metadata):
    """The image's own properties, from 2.98: not null, not its attributes."""
    shown = {}
    for name, value in system_metadata.items():
        if not name.startswith(IMAGE_PROPERTY_PREFIX) or value is None:
            continue
        name = name[len(IMAGE_PROPERTY_PREFIX):]
        if name not in IMAGE_ATTRIBUTES:
            shown[name] = value
    return shown
