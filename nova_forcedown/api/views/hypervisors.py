"""Hypervisor views: pure functions of a node, its service's liveness,
the microversion and whether status fields are shown (always at /v2.1; at
/v2 only while the os-hypervisor-status extension is enabled)."""

from oslo_serialization import jsonutils

from nova_forcedown.api.views import services as service_views

_RESOURCE_FIELDS = (
    'vcpus', 'memory_mb', 'local_gb', 'vcpus_used', 'memory_mb_used',
    'local_gb_used', 'free_ram_mb', 'free_disk_gb', 'current_workload',
    'running_vms', 'disk_available_least')


def _id(obj, version):
    return obj.uuid if version.matches('2.53') else obj.id


def summary(node, is_up, version, with_status):
    view = {'id': _id(node, version),
            'hypervisor_hostname': node.hypervisor_hostname}
    if with_status:
        view['state'] = service_views.state(is_up)
        view['status'] = service_views.status(node.service)
    return view


def detail(node, is_up, version, with_status):
    view = summary(node, is_up, version, with_status)
    view.update({
        'hypervisor_type': node.hypervisor_type,
        'hypervisor_version': node.hypervisor_version,
        'host_ip': str(node.host_ip) if node.host_ip is not None else None,
        'service': _service(node, version, with_status),
    })
    if version.matches('2.88'):
        view['uptime'] = (node.stats or {}).get('uptime')
        return view
    for field in _RESOURCE_FIELDS:
        view[field] = getattr(node, field)
    view['cpu_info'] = _cpu_info(node.cpu_info, version)
    return view


def _service(node, version, with_status):
    view = {'id': _id(node.service, version), 'host': node.host}
    if with_status:
        view['disabled_reason'] = node.service.disabled_reason
    return view


def _cpu_info(text, version):
    """JSON text before 2.28; an object from 2.28 ({} when empty or bad)."""
    if not version.matches('2.28'):
        return text
    try:
        value = jsonutils.loads(text) if text else {}
    except ValueError:
        return {}
    return value if isinstance(value, dict) else {}


def servers(instances):
    return [{'name': instance.display_name, 'uuid': instance.uuid}
            for instance in instances]


def uptime(node, is_up, version, with_status, text):
    view = summary(node, is_up, version, with_status)
    view['uptime'] = text
    return view


def statistics(sums):
    return {'hypervisor_statistics': dict(sums)}
