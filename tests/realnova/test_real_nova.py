"""A real Nova 34 cloud, as the monitor's end-to-end tests will find it.

One cloud serves the class (``tests/fixtures/real_nova.py``: Keystone,
Placement, nova-api, conductor, scheduler and three nova-compute hosts on
Nova's fake driver, each host behind a simulated BMC). These tests check
what a user of the cloud notices: the computes are up, a server boots on
the host asked for, a host switched off through its BMC is reported down
after ``service_down_time`` and up once switched on again, and a host
forced down has its server evacuated ACTIVE to another host. Each test
leaves the hosts it does not use alone, so their order does not matter:
the boot and the power tests use compute1 (it is back up at the end of
the power test), the evacuation compute2.
"""

import re
import shutil

from oslotest import base

from nova_forcedown.compute.drivers import fake_bmc
from tests.fixtures import processes
from tests.fixtures import real_nova

HOST = 'compute1'
EVACUATED_HOST = 'compute2'
# Nova's microversions at which an evacuated server comes back ACTIVE:
# from 2.95 on it is left stopped on its new host.
EVACUATE_MICROVERSION = '2.53'


class VirtualenvPinsTestCase(base.BaseTestCase):
    """What the cached virtualenv holds is named by its key.

    (Also the one test that runs where the cloud cannot: stestr fails a
    run in which every test skipped.)
    """

    def test_every_requirement_is_pinned(self):
        with open(real_nova.CONSTRAINTS) as constraints:
            pins = dict(line.strip().lower().split('==') for line in
                        constraints if '==' in line)
        for requirement in real_nova.REQUIREMENTS:
            name, _, version = requirement.lower().partition('==')
            self.assertIn(name, pins)
            self.assertIn(version, ('', pins[name]), requirement)
        self.assertTrue(re.fullmatch('[0-9a-f]{16}', real_nova.venv_key()))


class RealNovaTestCase(base.BaseTestCase):

    @classmethod
    def setUpClass(cls):
        super().setUpClass()
        cls.cloud = real_nova.RealNova.start_for_class(cls)

    def test_compute_services_are_listed_up(self):
        rows = self.cloud.openstack_json('compute', 'service', 'list',
                                         '--service', 'nova-compute')

        self.assertEqual(
            {host: ('up', 'enabled') for host in real_nova.HOSTS},
            {row['Host']: (row['State'], row['Status']) for row in rows})

    def test_server_booted_onto_a_host_becomes_active_there(self):
        [server_id] = self.cloud.boot_servers(HOST)

        server = self.cloud.servers()[server_id]
        self.assertEqual('ACTIVE', server['status'])
        self.assertEqual(HOST, self.cloud.server_host(server))

    def test_host_switched_off_through_its_bmc_is_down_then_up(self):
        if shutil.which('ipmitool') is None:
            self.skipTest('ipmitool is not installed (apt-get install '
                          'ipmitool)')
        others = self.other_states()
        # Whatever fails, the next test finds the host switched on.
        self.addCleanup(self.cloud.set_power, HOST, fake_bmc.ON)

        result = self.cloud.ipmitool(HOST, 'chassis', 'power', 'off')

        self.assertEqual(0, result.returncode, result.stderr)
        self.assertTrue(processes.wait_until(
            lambda: not self.cloud.compute_running(HOST), timeout=5),
            'nova-compute still runs on a host without power')
        # Nova notices when the heartbeats are missing for
        # service_down_time, not at once.
        waited = self.cloud.wait_for_states(
            {HOST: 'down'}, timeout=real_nova.SERVICE_DOWN_TIME + 40)
        self.assertGreater(waited, real_nova.REPORT_INTERVAL)
        self.assertEqual(others, self.other_states())
        self.assertIn('off', self.cloud.ipmitool(
            HOST, 'chassis', 'power', 'status').stdout)

        result = self.cloud.ipmitool(HOST, 'chassis', 'power', 'on')

        self.assertEqual(0, result.returncode, result.stderr)
        self.cloud.wait_for_states({HOST: 'up'}, timeout=90)
        self.assertTrue(self.cloud.compute_running(HOST))

    def other_states(self):
        return {host: state for host, state in self.cloud.states().items()
                if host != HOST}

    def test_forced_down_host_has_its_server_evacuated_active(self):
        [server_id] = self.cloud.boot_servers(EVACUATED_HOST)

        # Fenced through Redfish, as a monitor may.
        self.assertEqual(204, self.cloud.redfish_reset(EVACUATED_HOST,
                                                       'ForceOff'))
        self.assertEqual(fake_bmc.OFF, self.cloud.power(EVACUATED_HOST))
        self.assertTrue(processes.wait_until(
            lambda: not self.cloud.compute_running(EVACUATED_HOST),
            timeout=5))
        cli = ('--os-compute-api-version', EVACUATE_MICROVERSION)
        result = self.cloud.openstack(*cli, 'compute', 'service', 'set',
                                      '--down', EVACUATED_HOST,
                                      'nova-compute')
        self.assertEqual(0, result.returncode, result.stderr)
        service = self.cloud.services()[EVACUATED_HOST]
        self.assertEqual((True, 'down'),
                         (service['forced_down'], service['state']))

        result = self.cloud.openstack(*cli, 'server', 'evacuate', server_id)

        self.assertEqual(0, result.returncode, result.stderr)
        server = self.cloud.wait_for_servers(
            [server_id], condition=lambda server:
            self.cloud.server_host(server) != EVACUATED_HOST)[server_id]
        self.assertEqual('ACTIVE', server['status'])
        self.assertIn(self.cloud.server_host(server),
                      set(real_nova.HOSTS) - {EVACUATED_HOST})
