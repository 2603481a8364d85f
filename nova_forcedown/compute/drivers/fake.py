"""The fake driver: many simulated hosts, each with simulated servers.

For demos and scale tests: one agent process registers ``--hosts`` hosts
named ``<--host-prefix><i>`` (i from 1) with ``--instances`` servers each,
active and running, built with the flavor the agent gives (``--flavor``),
else with :data:`BUILT_IN_FLAVOR`.

Each simulated hypervisor knows what it runs (:meth:`FakeDriver.guests`).
With ``--state-dir`` it keeps that in ``<dir>/<host>.json``, written
atomically at each change: a killed and restarted agent finds its servers
still running, as a real host whose agent crashed does, and a test or the
fault-injection tool reads what every host runs. A host powered off (its
file emptied of guests while its agent is down) runs nothing when it
comes back.

Each host also has a power switch, ``<dir>/<host>.power``, which the
simulated BMCs of :mod:`.fake_bmc` turn over IPMI: a host switched off
runs nothing and does not heartbeat; switched on again, it boots empty.
"""

import ipaddress
import json
import os
import tempfile
import threading
import time
import uuid as uuid_module

from oslo_serialization import jsonutils

from nova_forcedown.compute.drivers import base
from nova_forcedown.compute.drivers import fake_bmc
from nova_forcedown.compute import uptime

# A plausible two-socket server.
VCPUS = 64
MEMORY_MB = 256 * 1024
LOCAL_GB = 1800
CPU_INFO = jsonutils.dumps({
    'arch': 'x86_64', 'model': 'Cascadelake-Server', 'vendor': 'Intel',
    'topology': {'sockets': 2, 'cores': 16, 'threads': 2},
    'features': ['avx2', 'avx512f', 'sse4.2', 'vmx']})

# Every simulated server has the same flavor: this one, unless the agent
# finds the flavor --flavor names.
INSTANCE_VCPUS = 2
INSTANCE_MEMORY_MB = 4096
INSTANCE_GB = 40
BUILT_IN_FLAVOR = {
    'flavorid': 'fake.small', 'name': 'fake.small',
    'memory_mb': INSTANCE_MEMORY_MB, 'vcpus': INSTANCE_VCPUS,
    'root_gb': INSTANCE_GB, 'ephemeral_gb': 0, 'swap': 0,
    'extra_specs': {}}

# Host addresses come from the benchmarking range of RFC 2544.
FIRST_ADDRESS = ipaddress.ip_address('198.18.0.0')
# Servers have one port each on this tenant network, in the order of
# their hosts and of the servers of each host, with Neutron's MAC prefix.
SERVER_NETWORK = 'private'
SERVER_ADDRESSES = ipaddress.ip_network('10.0.0.0/8')
MAC_PREFIX = 'fa:16:3e'

# Every simulated server is built from this image, with its properties
# kept as Nova keeps them, in the server's system metadata.
IMAGE_ID = '6a3e9d52-7c1f-4b8e-9f2d-0e5b4c3a2d10'
IMAGE_PROPERTIES = {
    'image_hw_disk_bus': 'virtio', 'image_hw_machine_type': 'q35',
    'image_hw_rng_model': 'virtio', 'image_os_distro': 'cirros',
    'image_os_type': 'linux'}
ROOT_DEVICE_NAME = '/dev/vda'

POWER_STATE_RUNNING = 1
POWER_STATE_SHUTDOWN = 4

# Where a server created through the API says it wants no port (as
# objects.instance.REQUESTED_NETWORKS names it).
REQUESTED_NETWORKS = 'requested_networks'


def uuid_int(text):
    return uuid_module.UUID(text).int


class FakeDriver(base.ComputeDriver):

    def __init__(self, conf):
        super().__init__(conf)
        self._started = time.monotonic()
        self._index = {'%s%d' % (conf.host_prefix, i): i
                       for i in range(1, conf.hosts + 1)}
        self._flavor = BUILT_IN_FLAVOR
        self._state_dir = getattr(conf, 'state_dir', None)
        self._lock = threading.Lock()
        # host -> {uuid: power_state}; None until the host has booted.
        self._guests = {host: self._load(host) for host in self._index}
        # uuid -> the flavor a server runs with, as the agent gave it.
        self._flavors = {}
        # Servers whose copy the agent removed, in order.
        self.destroyed = []
        # Hosts seen switched off, by powered().
        self._off = set()

    @property
    def power_states(self):
        """{uuid: power_state} of every server the hosts run."""
        with self._lock:
            return {uuid: state for guests in self._guests.values()
                    if guests for uuid, state in guests.items()}

    @property
    def builds_servers(self):
        return self.conf.instances > 0

    def use_flavor(self, flavor):
        self._flavor = flavor

    def hosts(self):
        return list(self._index)

    def instances(self, host):
        return [{'display_name': '%s-server-%d' % (host, i),
                 'hostname': '%s-server-%d' % (host, i),
                 'vm_state': 'active', 'power_state': POWER_STATE_RUNNING,
                 'task_state': None, 'flavor': self._flavor,
                 'image_ref': IMAGE_ID,
                 'system_metadata': IMAGE_PROPERTIES,
                 'root_device_name': ROOT_DEVICE_NAME,
                 'network_info': [self._port(host, i)]}
                for i in range(1, self.conf.instances + 1)]

    def _port(self, host, server):
        """Server ``server`` of ``host``'s port: an address of its own."""
        number = ((self._index[host] - 1) * self.conf.instances + server) % (
            SERVER_ADDRESSES.num_addresses - 2) + 1
        mac = ':'.join('%02x' % byte for byte in number.to_bytes(3, 'big'))
        return {'network': SERVER_NETWORK, 'version': 4, 'type': 'fixed',
                'address': str(SERVER_ADDRESSES[number]),
                'mac_address': '%s:%s' % (MAC_PREFIX, mac)}

    def powered(self, host):
        """Whether the host's power switch is on.

        A host found switched off loses what it ran, as a machine that
        loses power does.
        """
        if self._state_dir is None:
            return True
        on = fake_bmc.read_power(self._state_dir, host) == fake_bmc.ON
        with self._lock:
            if on:
                self._off.discard(host)
            elif host not in self._off:
                self._off.add(host)
                self._guests[host] = {}
                self._save(host)
        return on

    def guests(self, host):
        with self._lock:
            return dict(self._guests.get(host) or {})

    def adopt(self, host, instances):
        """A host booting for the first time runs its servers.

        Whether booting or not, it learns their sizes.
        """
        with self._lock:
            self._flavors.update((instance.uuid, instance.flavor)
                                 for instance in instances
                                 if instance.flavor)
            if self._guests.get(host) is not None:
                return
            self._guests[host] = {
                instance.uuid: instance.power_state or POWER_STATE_RUNNING
                for instance in instances}
            self._save(host)

    def power_off(self, instance):
        return self._set_power(instance, POWER_STATE_SHUTDOWN)

    def power_on(self, instance):
        return self._set_power(instance, POWER_STATE_RUNNING)

    def rebuild(self, instance, stopped=False):
        return self._set_power(instance, POWER_STATE_SHUTDOWN if stopped
                               else POWER_STATE_RUNNING)

    def spawn(self, instance):
        networks = (instance.system_metadata or {}).get(REQUESTED_NETWORKS)
        ports = [] if networks == 'none' else [self._port_of(instance.uuid)]
        return self._set_power(instance, POWER_STATE_RUNNING), ports

    def _port_of(self, uuid):
        """The port of a server created through the API.

        Its address is drawn from the upper half of the network by its
        uuid, away from those of the servers the agent made itself.
        """
        half = SERVER_ADDRESSES.num_addresses // 2
        number = half + uuid_int(uuid) % (half - 2) + 1
        mac = ':'.join('%02x' % byte for byte in
                       (number % (1 << 24)).to_bytes(3, 'big'))
        return {'network': SERVER_NETWORK, 'version': 4, 'type': 'fixed',
                'address': str(SERVER_ADDRESSES[number]),
                'mac_address': '%s:%s' % (MAC_PREFIX, mac)}

    def destroy(self, host, instance_uuid):
        with self._lock:
            guests = self._guests.get(host)
            if guests is not None and guests.pop(instance_uuid, None):
                self._save(host)
            self.destroyed.append(instance_uuid)

    def _set_power(self, instance, state):
        with self._lock:
            if instance.flavor:
                self._flavors[instance.uuid] = instance.flavor
            guests = self._guests.get(instance.host)
            if guests is None:
                guests = self._guests[instance.host] = {}
            guests[instance.uuid] = state
            self._save(instance.host)
        return state

    def _path(self, host):
        return os.path.join(self._state_dir, host + '.json')

    def _load(self, host):
        if self._state_dir is None:
            return None
        try:
            with open(self._path(host)) as state:
                return dict(json.load(state)['guests'])
        except FileNotFoundError:
            return None

    def _save(self, host):
        """Write ``host``'s guests whole, replacing the file at once."""
        if self._state_dir is None:
            return
        os.makedirs(self._state_dir, exist_ok=True)
        with tempfile.NamedTemporaryFile(
                'w', dir=self._state_dir, prefix='.' + host,
                delete=False) as state:
            json.dump({'host': host, 'guests': self._guests[host]}, state)
        os.replace(state.name, self._path(host))

    def node_resources(self, host):
        """The host's usage: the sizes of the servers it runs, on or off."""
        with self._lock:
            guests = dict(self._guests.get(host) or {})
            flavors = [self._flavors.get(uuid, self._flavor)
                       for uuid in guests]
        memory_used = sum(flavor['memory_mb'] for flavor in flavors)
        disk_used = sum(flavor['root_gb'] + flavor['ephemeral_gb']
                        for flavor in flavors)
        return {
            'hypervisor_type': 'fake',
            'hypervisor_version': 1000,
            'host_ip': str(FIRST_ADDRESS + self._index[host]),
            'cpu_info': CPU_INFO,
            'vcpus': VCPUS,
            'vcpus_used': sum(flavor['vcpus'] for flavor in flavors),
            'memory_mb': MEMORY_MB,
            'memory_mb_used': memory_used,
            'free_ram_mb': MEMORY_MB - memory_used,
            'local_gb': LOCAL_GB,
            'local_gb_used': disk_used,
            'free_disk_gb': LOCAL_GB - disk_used,
            'disk_available_least': LOCAL_GB - disk_used,
            'current_workload': 0,
            'running_vms': len(guests),
            'supported_instances': [['x86_64', 'fake', 'hvm']],
            'stats': self._stats(guests),
        }

    def _stats(self, guests):
        count = str(len(guests))
        running = sum(1 for state in guests.values()
                      if state == POWER_STATE_RUNNING)
        return {'num_instances': count, 'num_vm_active': str(running),
                'num_task_None': count, 'io_workload': '0',
                'uptime': uptime.format_uptime(
                    time.monotonic() - self._started)}
