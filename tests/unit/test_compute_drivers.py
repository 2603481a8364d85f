"""The compute agent's drivers: /proc parsing, uptime text, fake hosts."""

import json
import os
import time
import types

import fixtures
from oslotest import base

from nova_forcedown.cmd import compute as compute_cmd
from nova_forcedown.compute import agent
from nova_forcedown.compute.drivers import fake
from nova_forcedown.compute.drivers import local
from nova_forcedown.compute import uptime
from nova_forcedown import conf as nf_conf
from nova_forcedown import exception
from nova_forcedown.objects import service as service_obj

CPUINFO = """processor\t: 0
vendor_id\t: GenuineIntel
model name\t: Intel(R) Xeon(R) Gold 6230 CPU @ 2.10GHz
physical id\t: 0
siblings\t: 4
cpu cores\t: 2
flags\t\t: fpu vmx sse4_2 avx2

processor\t: 1
vendor_id\t: GenuineIntel
model name\t: Intel(R) Xeon(R) Gold 6230 CPU @ 2.10GHz
physical id\t: 1
siblings\t: 4
cpu cores\t: 2
flags\t\t: fpu vmx sse4_2 avx2

"""

AARCH64_CPUINFO = """processor\t: 0
BogoMIPS\t: 50.00
Features\t: fp asimd evtstrm aes

Hardware\t: some board
"""

MEMINFO = """MemTotal:       16318412 kB
MemFree:         1021908 kB
MemAvailable:    9327244 kB
HugePages_Total:       0
"""


def _agent_conf(*args):
    return nf_conf.make_conf(list(args), default_config_files=[],
                             default_config_dirs=[],
                             register_cli=compute_cmd.CLI_OPTS)


class TestProcParsing(base.BaseTestCase):

    def _file(self, text):
        path = os.path.join(self.useFixture(fixtures.TempDir()).path, 'f')
        with open(path, 'w') as proc_file:
            proc_file.write(text)
        return path

    def test_meminfo_values_are_kibibytes(self):
        meminfo = local.read_meminfo(self._file(MEMINFO))
        self.assertEqual({'MemTotal': 16318412, 'MemFree': 1021908,
                          'MemAvailable': 9327244, 'HugePages_Total': 0},
                         meminfo)

    def test_real_meminfo(self):
        meminfo = local.read_meminfo()
        self.assertGreater(meminfo['MemTotal'], 0)
        self.assertLessEqual(meminfo['MemFree'], meminfo['MemTotal'])

    def test_cpu_info_of_two_sockets(self):
        info = local.cpu_info(local.read_cpuinfo(self._file(CPUINFO)),
                              'x86_64')
        self.assertEqual({
            'arch': 'x86_64',
            'model': 'Intel(R) Xeon(R) Gold 6230 CPU @ 2.10GHz',
            'vendor': 'Intel',
            'topology': {'sockets': 2, 'cores': 2, 'threads': 2},
            'features': ['avx2', 'fpu', 'sse4_2', 'vmx']}, info)

    def test_cpu_info_of_aarch64(self):
        info = local.cpu_info(
            local.read_cpuinfo(self._file(AARCH64_CPUINFO)), 'aarch64')
        self.assertEqual(('aarch64', 'unknown', ['aes', 'asimd', 'evtstrm',
                                                 'fp']),
                         (info['model'], info['vendor'], info['features']))
        self.assertEqual({'sockets': 1, 'cores': 1, 'threads': 1},
                         info['topology'])

    def test_real_cpuinfo(self):
        processors = [p for p in local.read_cpuinfo() if 'processor' in p]
        self.assertGreaterEqual(len(processors), 1)
        info = local.cpu_info(processors, 'x86_64')
        self.assertGreaterEqual(info['topology']['sockets'], 1)

    def test_version_to_int(self):
        self.assertEqual(6008000, local.version_to_int('6.8.0-45-generic'))
        self.assertEqual(5015000, local.version_to_int('5.15'))


class TestUptime(base.BaseTestCase):

    NOW = time.struct_time((2026, 11, 30, 10, 15, 1, 0, 334, 0))
    LOAD = (0.0, 0.01, 0.05)

    def _text(self, seconds):
        return uptime.format_uptime(seconds, self.NOW, self.LOAD)

    def test_days_hours_and_minutes(self):
        seconds = 3 * 86400 + 4 * 3600 + 5 * 60 + 59
        self.assertEqual(' 10:15:01 up 3 days,  4:05,  load average: '
                         '0.00, 0.01, 0.05', self._text(seconds))

    def test_under_an_hour(self):
        self.assertEqual(' 10:15:01 up 7 min,  load average: 0.00, 0.01, '
                         '0.05', self._text(7 * 60 + 3))

    def test_one_day_and_minutes(self):
        self.assertEqual(' 10:15:01 up 1 day, 7 min,  load average: 0.00, '
                         '0.01, 0.05', self._text(86400 + 7 * 60))

    def test_real_proc_uptime(self):
        self.assertGreater(uptime.read_seconds(), 0)
        self.assertIn(' up ', uptime.format_uptime(uptime.read_seconds()))


class TestLocalDriver(base.BaseTestCase):

    def test_reports_this_machine(self):
        conf = _agent_conf('--host', 'here')
        driver = local.LocalDriver(conf)

        resources = driver.node_resources('here')

        self.assertEqual(['here'], driver.hosts())
        self.assertEqual(os.cpu_count(), resources['vcpus'])
        self.assertEqual(resources['memory_mb'],
                         resources['free_ram_mb'] +
                         resources['memory_mb_used'])
        self.assertGreaterEqual(resources['local_gb'],
                                resources['local_gb_used'])
        self.assertIn(' up ', resources['stats']['uptime'])
        self.assertIn('topology', json.loads(resources['cpu_info']))

    def test_defaults_to_the_configured_host(self):
        conf = _agent_conf()
        self.assertEqual([conf.host], local.LocalDriver(conf).hosts())

    def test_refuses_fake_driver_options(self):
        self.assertRaises(exception.Invalid, local.LocalDriver,
                          _agent_conf('--hosts', '3'))
        self.assertRaises(exception.Invalid, local.LocalDriver,
                          _agent_conf('--instances', '2'))


class TestFakeDriver(base.BaseTestCase):

    def setUp(self):
        super().setUp()
        self.driver = fake.FakeDriver(_agent_conf(
            '--driver', 'fake', '--hosts', '3', '--host-prefix', 'sim-',
            '--instances', '4'))

    def test_hosts_are_numbered_from_one(self):
        self.assertEqual(['sim-1', 'sim-2', 'sim-3'], self.driver.hosts())

    def test_instances_per_host(self):
        instances = self.driver.instances('sim-2')
        self.assertEqual(4, len(instances))
        self.assertEqual('sim-2-server-1', instances[0]['display_name'])
        self.assertEqual({'active'}, {i['vm_state'] for i in instances})

    def _server(self, uuid, flavor=fake.BUILT_IN_FLAVOR, power_state=1,
                host='sim-1'):
        return types.SimpleNamespace(uuid=uuid, flavor=flavor, host=host,
                                     power_state=power_state)

    def test_usage_is_the_servers_a_host_runs(self):
        big = dict(fake.BUILT_IN_FLAVOR, vcpus=8, memory_mb=16384,
                   root_gb=100, ephemeral_gb=20)
        self.driver.adopt('sim-1', [self._server('a'), self._server('b'),
                                    self._server('c', big, power_state=4)])

        resources = self.driver.node_resources('sim-1')
        self.assertEqual((3, '3', '2'), (
            resources['running_vms'], resources['stats']['num_instances'],
            resources['stats']['num_vm_active']))
        self.assertEqual((2 + 2 + 8, 4096 * 2 + 16384, 40 * 2 + 120),
                         (resources['vcpus_used'],
                          resources['memory_mb_used'],
                          resources['local_gb_used']))
        self.assertEqual(resources['memory_mb'],
                         resources['free_ram_mb'] +
                         resources['memory_mb_used'])
        self.assertEqual(resources['local_gb'],
                         resources['free_disk_gb'] +
                         resources['local_gb_used'])

    def test_usage_follows_an_evacuation(self):
        self.driver.adopt('sim-1', [self._server('a'), self._server('b')])
        self.driver.adopt('sim-2', [])
        big = dict(fake.BUILT_IN_FLAVOR, vcpus=8)

        self.driver.rebuild(self._server('b', big, host='sim-2'))
        self.driver.destroy('sim-1', 'b')

        self.assertEqual([(1, 2), (1, 8)], [
            (resources['running_vms'], resources['vcpus_used'])
            for resources in map(self.driver.node_resources,
                                 ('sim-1', 'sim-2'))])

    def test_a_host_not_yet_booted_runs_nothing(self):
        self.assertEqual((0, 0), (
            self.driver.node_resources('sim-3')['running_vms'],
            self.driver.node_resources('sim-3')['memory_mb_used']))

    def test_each_host_has_its_own_address(self):
        self.assertEqual(3, len({self.driver.node_resources(host)['host_ip']
                                 for host in self.driver.hosts()}))


class TestAgentHelpers(base.BaseTestCase):

    def test_topic_of_binary(self):
        self.assertEqual('compute', agent.topic_of('nova-compute'))
        self.assertEqual('scheduler', agent.topic_of('nova-scheduler'))

    def test_set_changed_marks_only_differing_fields(self):
        service = service_obj.Service(host='h', version=1, topic='compute',
                                      availability_zone=None)
        service.obj_reset_changes()

        agent.set_changed(service, {'version': 1, 'topic': 'compute',
                                    'availability_zone': 'az1'})

        self.assertEqual({'availability_zone': 'az1'},
                         service.obj_get_changes())

    def test_drivers_are_entry_points(self):
        for name, cls in (('local', local.LocalDriver),
                          ('fake', fake.FakeDriver)):
            self.assertIsInstance(
                agent.load_driver(_agent_conf('--driver', name)), cls)
