"""Fence drivers: how the monitor reads and switches a host's power."""
