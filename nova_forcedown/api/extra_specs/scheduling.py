"""Specs the scheduler reads: placement's ``resources`` and ``trait``
requests (with their request groups and ``group_policy``), and the
``aggregate_instance_extra_specs:`` and ``capabilities:`` filters.

Resource classes and traits are the standard ones of os-resource-classes
and os-traits, plus any ``CUSTOM_`` name.
"""

import re

import os_resource_classes
import os_traits

from nova_forcedown.api.extra_specs.values import Choice
from nova_forcedown.api.extra_specs.values import INTEGER
from nova_forcedown.api.extra_specs.values import TEXT

# A request group's suffix: resources1:VCPU, trait_gpu:HW_GPU_API_VULKAN.
_GROUP = r'([a-zA-Z0-9_-]{1,64})?'


def _one_of(names):
    return '(%s)' % '|'.join(
        ['CUSTOM_[A-Z0-9_]+'] + [re.escape(name) for name in names])


# Host attributes the capabilities filter compares with a value.
_CAPABILITIES = (
    'id', 'uuid', 'service_id', 'host', 'vcpus', 'memory_mb', 'local_gb',
    'vcpus_used', 'memory_mb_used', 'local_gb_used', 'hypervisor_type',
    'hypervisor_version', 'hypervisor_hostname', 'free_ram_mb',
    'free_disk_gb', 'current_workload', 'running_vms',
    'disk_available_least', 'host_ip', 'mapped', 'cpu_allocation_ratio',
    'ram_allocation_ratio', 'disk_allocation_ratio', 'total_usable_ram_mb',
    'total_usable_disk_gb', 'disk_mb_used', 'free_disk_mb', 'vcpus_total',
    'num_instances', 'num_io_ops', 'failed_builds', 'aggregates',
    'cell_uuid', 'updated')
# ... and those that hold a structure, read down a path of ":key"s.
_NESTED_CAPABILITIES = (
    'cpu_info', 'metrics', 'stats', 'numa_topology', 'supported_hv_specs',
    'pci_device_pools', 'nodename', 'pci_stats', 'supported_instances',
    'limits', 'instances')

SPECS = {
    'resources%s:%s' % (_GROUP, _one_of(os_resource_classes.STANDARDS)):
        INTEGER,
    'trait%s:%s' % (_GROUP, _one_of(os_traits.get_traits())):
        Choice('required', 'forbidden'),
    'group_policy': Choice('isolate', 'none'),
    'aggregate_instance_extra_specs:.+': TEXT,
    'capabilities:(%s)(:\\w+)*' % '|'.join(_NESTED_CAPABILITIES): TEXT,
}
SPECS.update(('capabilities:%s' % name, TEXT) for name in _CAPABILITIES)
