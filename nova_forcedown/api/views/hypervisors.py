"""Hypervisor views: pure functions of a node, its service's liveness,
the microversion and whether status fields are shown (always at /v2.1; at
/v2 only while the os-hypervisor-status extension is enabled).

A listing renders thousands of nodes with one :class:`Hypervisors`: what
depends only on the request (the microversion, the status fields) is
decided once, not once per node.
"""

from oslo_serialization import jsonutils

from nova_forcedown.api import microversion
from nova_forcedown.servicegroup import status as service_status

_RESOURCE_FIELDS = (
    'vcpus', 'memory_mb', 'local_gb', 'vcpus_used', 'memory_mb_used',
    'local_gb_used', 'free_ram_mb', 'free_disk_gb', 'current_workload',
    'running_vms', 'disk_available_least')


class Hypervisors:
    """The views of one request: ``summary`` and ``detail`` of a node."""

    def __init__(self, version, with_status):
        self.uuid_ids = version.matches(microversion.V2_53)  # UUIDs for ids
        self.cpu_info_object = version.matches(microversion.V2_28)
        self.slim = version.matches(microversion.V2_88)  # uptime, no resources
        self.with_status = with_status
        self._cpu_info = {}                                  # text -> object

    def summary(self, node, is_up):
        view = {'id': node.uuid if self.uuid_ids else node.id,
                'hypervisor_hostname': node.hypervisor_hostname}
        if self.with_status:
            view['state'] = service_status.state(is_up)
            view['status'] = service_status.status(node.service)
        return view

    def detail(self, node, is_up):
        view = self.summary(node, is_up)
        service = node.service
        service_view = {'id': service.uuid if self.uuid_ids else service.id,
                        'host': node.host}
        if self.with_status:
            service_view['disabled_reason'] = service.disabled_reason
        view['hypervisor_type'] = node.hypervisor_type
        view['hypervisor_version'] = node.hypervisor_version
        view['host_ip'] = (str(node.host_ip) if node.host_ip is not None
                           else None)
        view['service'] = service_view
        if self.slim:
            view['uptime'] = (node.stats or {}).get('uptime')
            return view
        for field in _RESOURCE_FIELDS:
            view[field] = getattr(node, field)
        view['cpu_info'] = self.cpu_info(node.cpu_info)
        return view

    def cpu_info(self, text):
        """JSON text before 2.28; an object from 2.28 ({} when empty or bad).

        Hosts of one cloud mostly share their CPU description, so each
        distinct text is parsed once per request.
        """
        if not self.cpu_info_object:
            return text
        try:
            return self._cpu_info[text]
        except KeyError:
            value = self._cpu_info[text] = _cpu_info_object(text)
            return value


def _cpu_info_object(text):
    try:
        value = jsonutils.loads(text) if text else {}
    except ValueError:
        return {}
    return value if isinstance(value, dict) else {}


def summary(node, is_up, version, with_status):
    return Hypervisors(version, with_status).summary(node, is_up)


def detail(node, is_up, version, with_status):
    return Hypervisors(version, with_status).detail(node, is_up)


def servers(instances):
    return [{'name': instance.display_name, 'uuid': instance.uuid}
            for instance in instances]


def uptime(node, is_up, version, with_status, text):
    view = summary(node, is_up, version, with_status)
    view['uptime'] = text
    return view


def statistics(sums):
    return {'hypervisor_statistics': dict(sums)}
