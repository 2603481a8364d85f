"""Compute agent drivers, by name in the nova_forcedown.compute.drivers
namespace: ``local`` (this machine) and ``fake`` (simulated hosts)."""
