"""The local driver: this machine's real CPU, memory, disk and uptime."""

import os
import platform
import re
import shutil

from oslo_serialization import jsonutils
from oslo_utils import netutils

from nova_forcedown.compute.drivers import base
from nova_forcedown.compute import uptime
from nova_forcedown import exception

PROC_MEMINFO = '/proc/meminfo'
PROC_CPUINFO = '/proc/cpuinfo'
GIB = 1024 ** 3

# /proc/cpuinfo vendor ids as libvirt (and so Nova's cpu_info) names them.
_VENDORS = {'GenuineIntel': 'Intel', 'AuthenticAMD': 'AMD'}


def read_meminfo(path=PROC_MEMINFO):
    """/proc/meminfo as ``{name: kibibytes}``."""
    values = {}
    with open(path) as proc_file:
        for line in proc_file:
            name, _, rest = line.partition(':')
            fields = rest.split()
            if fields and fields[0].isdigit():
                values[name.strip()] = int(fields[0])
    return values


def read_cpuinfo(path=PROC_CPUINFO):
    """The processor blocks of /proc/cpuinfo, each as a dict."""
    with open(path) as proc_file:
        blocks = proc_file.read().split('\n\n')
    return [dict(_key_value(line) for line in block.splitlines()
                 if ':' in line)
            for block in blocks if block.strip()]


def _key_value(line):
    key, _, value = line.partition(':')
    return key.strip(), value.strip()


def cpu_info(processors, arch):
    """Nova's cpu_info: arch, model, vendor, topology and features."""
    first = next((p for p in processors if 'processor' in p), {})
    cores = int(first.get('cpu cores', 1)) or 1
    siblings = int(first.get('siblings', cores))
    sockets = len({p['physical id'] for p in processors
                   if 'physical id' in p}) or 1
    vendor = first.get('vendor_id', 'unknown')
    return {
        'arch': arch,
        'model': first.get('model name', arch),
        'vendor': _VENDORS.get(vendor, vendor),
        'topology': {'sockets': sockets, 'cores': cores,
                     'threads': max(siblings // cores, 1)},
        'features': sorted(set(
            (first.get('flags') or first.get('Features') or '').split())),
    }


def version_to_int(release):
    """``6.8.0-45-generic`` -> 6008000, Nova's integer hypervisor version."""
    numbers = [int(n) for n in re.findall(r'\d+', release)[:3]]
    numbers += [0] * (3 - len(numbers))
    return numbers[0] * 1000000 + numbers[1] * 1000 + numbers[2]


def _existing_directory(path):
    path = os.path.abspath(path)
    while not os.path.isdir(path):
        path = os.path.dirname(path)
    return path


class LocalDriver(base.ComputeDriver):
    """One host, this machine, named by ``--host`` or ``[DEFAULT] host``."""

    def __init__(self, conf):
        super().__init__(conf)
        if conf.hosts != 1 or conf.instances:
            raise exception.Invalid(
                'The local driver reports this machine only; --hosts and '
                '--instances are options of the fake driver.')

    def hosts(self):
        return [self.conf.agent_host or self.conf.host]

    def node_resources(self, host):
        resources = {
            'hypervisor_type': platform.system(),
            'hypervisor_version': version_to_int(platform.release()),
            'host_ip': netutils.get_my_ipv4(),
            'cpu_info': jsonutils.dumps(
                cpu_info(read_cpuinfo(), platform.machine())),
            'vcpus': os.cpu_count() or 1,
            'vcpus_used': 0,
            'current_workload': 0,
            'running_vms': 0,
            # It reports the machine and runs no server: never a
            # destination of an evacuation.
            'supported_instances': [],
            'stats': {'num_instances': '0',
                      'uptime': uptime.format_uptime(uptime.read_seconds())},
        }
        resources.update(self._memory())
        resources.update(self._disk())
        return resources

    @staticmethod
    def _memory():
        meminfo = read_meminfo()
        memory_mb = meminfo['MemTotal'] // 1024
        free_mb = meminfo.get('MemAvailable', meminfo.get('MemFree', 0))
        free_mb //= 1024
        return {'memory_mb': memory_mb, 'free_ram_mb': free_mb,
                'memory_mb_used': memory_mb - free_mb}

    def _disk(self):
        usage = shutil.disk_usage(_existing_directory(self.conf.state_path))
        free_gb = usage.free // GIB
        return {'local_gb': usage.total // GIB,
                'local_gb_used': usage.used // GIB,
                'free_disk_gb': free_gb, 'disk_available_least': free_gb}
