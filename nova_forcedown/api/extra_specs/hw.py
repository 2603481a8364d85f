"""Specs of the guest's virtual hardware and firmware: ``hw:``,
``hw_rng:``, ``hw_video:``, ``os:`` and the old ``hide_hypervisor_id``."""

from nova_forcedown.api.extra_specs.values import BOOLEAN
from nova_forcedown.api.extra_specs.values import Choice
from nova_forcedown.api.extra_specs.values import COUNT
from nova_forcedown.api.extra_specs.values import Format
from nova_forcedown.api.extra_specs.values import Integer
from nova_forcedown.api.extra_specs.values import POSITIVE

# A list of host CPUs as Nova writes it: "0-3,^2,5". Nova quotes these
# patterns in its refusals, so they are kept to the character.
_CPU_LIST = r'\^?\d+((-\d+)?(,\^?\d+(-\d+)?)?)*'
_REALTIME_CPU_LIST = r'(\^)?\d+((-\d+)?(,\^?\d+(-\d+)?)?)*'

SPECS = {
    # CPU placement and real time.
    'hw:cpu_policy': Choice('dedicated', 'shared', 'mixed'),
    'hw:cpu_thread_policy': Choice('prefer', 'isolate', 'require'),
    'hw:emulator_threads_policy': Choice('isolate', 'share'),
    'hw:cpu_dedicated_mask': Format(_CPU_LIST),
    'hw:cpu_realtime': BOOLEAN,
    'hw:cpu_realtime_mask': Format(_REALTIME_CPU_LIST),
    # CPU topology.
    'hw:cpu_sockets': POSITIVE,
    'hw:cpu_cores': POSITIVE,
    'hw:cpu_threads': POSITIVE,
    'hw:cpu_max_sockets': POSITIVE,
    'hw:cpu_max_cores': POSITIVE,
    'hw:cpu_max_threads': POSITIVE,
    # Memory and NUMA.
    'hw:mem_page_size': Format(r'(large|small|any|\d+([kKMGT]i?)?(b|bit|B)?)'),
    'hw:locked_memory': BOOLEAN,
    'hw:numa_nodes': POSITIVE,
    r'hw:numa_cpus\.\d+': Format(_CPU_LIST),
    r'hw:numa_mem\.\d+': POSITIVE,
    'hw:pci_numa_affinity_policy': Choice(
        'required', 'preferred', 'legacy', 'socket'),
    'hw:mem_encryption': BOOLEAN,
    'hw:mem_encryption_model': Choice('amd-sev', 'amd-sev-es', 'amd-sev-snp'),
    'hw:pmem': Format('([a-zA-Z0-9_]+(,)?)+'),
    # Devices and features.
    'hw:hide_hypervisor_id': BOOLEAN,
    'hw:boot_menu': BOOLEAN,
    'hw:vif_multiqueue_enabled': BOOLEAN,
    'hw:pmu': BOOLEAN,
    'hw:serial_port_count': COUNT,
    'hw:tpm_model': Choice('tpm-tis', 'tpm-crb'),
    'hw:tpm_version': Choice('1.2', '2.0'),
    'hw:tpm_secret_security': Choice('user', 'host', 'deployment'),
    'hw:watchdog_action': Choice(
        'none', 'pause', 'poweroff', 'reset', 'disabled'),
    'hw:viommu_model': Choice('intel', 'smmuv3', 'virtio', 'auto'),
    'hw:virtio_packed_ring': BOOLEAN,
    'hw:sound_model': Choice(
        'sb16', 'es1370', 'pcspk', 'ac97', 'ich6', 'ich9', 'usb', 'virtio'),
    'hw:usb_model': Choice('none', 'nec-xhci', 'qemu-xhci'),
    'hw:redirected_usb_ports': Integer(minimum=0, maximum=15),
    'hw:ephemeral_encryption': BOOLEAN,
    'hw:ephemeral_encryption_format': Choice('plain', 'luks', 'luksv2'),
    # Random numbers and video.
    'hw_rng:allowed': BOOLEAN,
    'hw_rng:rate_bytes': COUNT,
    'hw_rng:rate_period': COUNT,
    'hw_video:ram_max_mb': COUNT,
    # Firmware.
    'os:secure_boot': Choice('disabled', 'required'),
    # Deprecated in Nova for hw:hide_hypervisor_id, still checked.
    'hide_hypervisor_id': BOOLEAN,
}
