"""Specs of devices passed to the guest, and of the VMware driver:
``accel:``, ``pci_passthrough:``, ``vmware:``."""

from nova_forcedown.api.extra_specs.values import Format
from nova_forcedown.api.extra_specs.values import TEXT

SPECS = {
    'accel:device_profile': TEXT,
    # "alias:count", comma separated.
    'pci_passthrough:alias': Format(r'[^:]+:\d+(?:\s*,\s*[^:]+:\d+)*'),
    'vmware:hw_version': TEXT,
    'vmware:storage_policy': TEXT,
}
