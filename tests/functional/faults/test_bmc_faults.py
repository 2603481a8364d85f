"""BMCs that hang, and BMCs sent garbage, under the monitor's fence drivers.

The monitor judges and fences its hosts concurrently, a thread each: a
call to a BMC that never answers must cost the driver's timeout and no
more, and nothing to a call to another BMC made meanwhile. The BMCs that
never answer are real sockets on loopback: a UDP socket that reads and
never answers (IPMI), a TCP listener that accepts and never answers
(Redfish), and a simulated BMC stopped (SIGSTOP) once a session with it is
open; the BMCs that answer are the project's simulated ones, a process
each, as the monitor's end-to-end tests start them. A fence agent that
hangs is killed with what it started. A simulated BMC survives any packet.

The bounds on time are generous for a loaded machine (two cores shared
with other test runs) and still well below what the calls took before
they were bounded: 4 to 6 s for an IPMI BMC silent from the start, about
28 s for one that stops answering an open session, 3 * timeout + 6 s for
each Redfish request.
"""

import os
import shutil
import signal
import socket
import stat
import sys
import threading
import time
import uuid

import fixtures
import testtools

from nova_forcedown.compute.drivers import fake_bmc
from nova_forcedown.conf import monitor as monitor_conf
from nova_forcedown.monitor.drivers import base
from nova_forcedown.monitor.drivers import fence_agent
from nova_forcedown.monitor.drivers import ipmi
from nova_forcedown.monitor.drivers import redfish
from tests.fixtures import monitored_hosts
from tests.fixtures import processes

USER = 'admin'
# Seconds a call may take beyond its timeout here: a thread's start and
# the machine's load.
SLACK = 2.5
HOST = 'bmc-1'


def settings(**given):
    """A host's :class:`HostSettings`: ``given``, the others None."""
    values = dict.fromkeys(monitor_conf.HostSettings._fields)
    values.update(host=HOST, bmc_address='127.0.0.1', bmc_username=USER,
                  redfish_scheme='http', redfish_verify=False, **given)
    return monitor_conf.HostSettings(**values)


class SimulatedBmc(fixtures.Fixture):
    """The simulated BMC of host ``bmc-1``, a process of its own.

    IPMI on ``port``, Redfish on ``redfish_port``. Each has its own
    password: pyghmi keeps a session per BMC, user and password for its
    process, and a BMC of another test on a port used again must not
    find one.
    """

    def _setUp(self):
        self.password = uuid.uuid4().hex[:16]
        self.state_dir = self.useFixture(fixtures.TempDir()).path
        for _ in range(5):
            # Free now; another test's BMC may take them first, and this
            # one exits: then again, on others.
            self.port = monitored_hosts.free_udp_ports(1)
            self.redfish_port = processes.free_port()
            self.process = self.useFixture(processes.Process([
                sys.executable, '-m',
                'nova_forcedown.compute.drivers.fake_bmc',
                '--state-dir', self.state_dir, '--host-prefix', 'bmc-',
                '--port', str(self.port), '--redfish-port',
                str(self.redfish_port), '--username', USER,
                '--password', self.password]))
            processes.wait_until(
                lambda: self.process.process.poll() is not None or
                fake_bmc.SERVING in self.process.output(), timeout=60)
            if self.alive() and fake_bmc.SERVING in self.process.output():
                return
        raise AssertionError(self.process.output())

    def alive(self):
        return self.process.process.poll() is None

    def hang(self):
        """Stop it: it reads nothing more and answers nothing more."""
        os.kill(self.process.process.pid, signal.SIGSTOP)
        # SIGCONT first, so that the SIGTERM of its clean-up ends it.
        self.addCleanup(os.kill, self.process.process.pid, signal.SIGCONT)

    def ipmi(self, timeout):
        return ipmi.IpmiDriver(settings(
            fence_driver='ipmi', bmc_port=self.port,
            bmc_password=self.password), timeout)

    def redfish(self, timeout):
        return redfish.RedfishDriver(settings(
            fence_driver='redfish', bmc_port=self.redfish_port,
            bmc_password=self.password), timeout)


class SilentUdp(fixtures.Fixture):
    """A UDP port on loopback that reads every packet and answers none."""

    def _setUp(self):
        self.socket = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
        self.socket.bind(('127.0.0.1', 0))
        self.port = self.socket.getsockname()[1]
        self.packets = 0
        threading.Thread(target=self._read, daemon=True).start()
        self.addCleanup(self.socket.close)

    def _read(self):
        try:
            while self.socket.recv(4096) is not None:
                self.packets += 1
        except OSError:
            return  # closed

    def ipmi(self, timeout):
        return ipmi.IpmiDriver(settings(
            fence_driver='ipmi', bmc_port=self.port, bmc_password='x'),
            timeout)


class SilentTcp(fixtures.Fixture):
    """A TCP port on loopback that accepts connections and answers none."""

    def _setUp(self):
        self.listener = socket.socket()
        self.listener.bind(('127.0.0.1', 0))
        self.listener.listen(16)
        self.port = self.listener.getsockname()[1]
        self.connections = []
        threading.Thread(target=self._accept, daemon=True).start()
        self.addCleanup(self._close)

    def _accept(self):
        try:
            while True:
                self.connections.append(self.listener.accept()[0])
        except OSError:
            return  # closed

    def _close(self):
        self.listener.close()
        for connection in self.connections:
            connection.close()

    def redfish(self, timeout):
        # No redfish_system: the driver would read the systems first.
        return redfish.RedfishDriver(settings(
            fence_driver='redfish', bmc_port=self.port, bmc_password='x'),
            timeout)


class Timed(threading.Thread):
    """``function()`` in a thread: what it returned or raised, how long."""

    def __init__(self, function):
        super().__init__(daemon=True)
        self._function = function
        self.value = self.error = self.took = None
        self.start()

    def run(self):
        started = time.monotonic()
        try:
            self.value = self._function()
        except Exception as exc:  # noqa: kept for the test
            self.error = exc
        self.took = time.monotonic() - started


class TestIpmi(testtools.TestCase):

    def test_a_silent_bmc_costs_its_timeout(self):
        silent = self.useFixture(SilentUdp())
        call = Timed(silent.ipmi(timeout=1).status)
        call.join()
        self.assertIsInstance(call.error, base.FenceError)
        self.assertEqual('IPMI 127.0.0.1:%d: no answer within 1 s'
                         % silent.port, str(call.error))
        self.assertLess(call.took, 1 + SLACK)
        self.assertGreater(silent.packets, 0)

    def test_a_hung_bmc_costs_nothing_to_the_others(self):
        hung = self.useFixture(SimulatedBmc())
        working = self.useFixture(SimulatedBmc())
        silent = self.useFixture(SilentUdp())
        # A session open with it, then it hangs: pyghmi's slowest case.
        self.assertEqual(base.ON, hung.ipmi(timeout=10).power_state())
        hung.hang()

        hanging = [Timed(hung.ipmi(timeout=8).status),
                   Timed(silent.ipmi(timeout=8).status)]
        # The first read of another BMC logs in and answers meanwhile.
        fake_bmc.write_faults(working.state_dir, HOST, 'cooling')
        self.assertEqual(
            base.BmcStatus(base.ON, base.WARNING, ('Cooling/Fan Fault',)),
            working.ipmi(timeout=8).status())
        # The hung BMC's call is still waiting (pyghmi would for 28 s);
        # the silent one's may have ended: pyghmi gives up a login that
        # has no answer after 4 to 6 s.
        self.assertTrue(hanging[0].is_alive())
        # A second call to the hung BMC waits for the first within its
        # own timeout.
        second = Timed(hung.ipmi(timeout=1).status)
        second.join()
        self.assertIn('no answer within 1 s (its call before this one has '
                      'not ended)', str(second.error))
        self.assertLess(second.took, 1 + SLACK)

        for call in hanging:
            call.join()
            self.assertIsInstance(call.error, base.FenceError)
            self.assertIn('IPMI 127.0.0.1:', str(call.error))
            self.assertLess(call.took, 8 + SLACK)
        self.assertIn('no answer within 8 s', str(hanging[0].error))
        # The hung BMC's call, abandoned, still waits inside pyghmi; the
        # working BMC answers, fenced and read again.
        working.ipmi(timeout=5).power_off()
        self.assertEqual(base.OFF, working.ipmi(timeout=5).power_state())


class TestRedfish(testtools.TestCase):

    def test_a_silent_bmc_costs_its_timeout_in_all(self):
        working = self.useFixture(SimulatedBmc())
        silent = self.useFixture(SilentTcp())
        call = Timed(silent.redfish(timeout=3).status)
        self.assertEqual(base.ON, working.redfish(timeout=3).power_state())
        self.assertTrue(call.is_alive())
        call.join()
        self.assertIsInstance(call.error, base.FenceError)
        self.assertEqual('Redfish http://127.0.0.1:%d: no answer within 3 s'
                         % silent.port, str(call.error))
        self.assertLess(call.took, 3 + SLACK)


class TestFenceAgent(testtools.TestCase):

    def test_a_hung_agent_is_killed_with_what_it_started(self):
        directory = self.useFixture(fixtures.TempDir()).path
        agent = os.path.join(directory, 'fence_hang')
        with open(agent, 'w') as script:
            script.write('#!/bin/sh\necho $$ > %s/agent.pid\n'
                         'sleep 600 &\necho $! > %s/child.pid\nsleep 600\n'
                         % (directory, directory))
        os.chmod(agent, os.stat(agent).st_mode | stat.S_IEXEC)
        driver = fence_agent.FenceAgentDriver(settings(
            fence_driver='fence_agent', fence_agent=agent), timeout=1)

        started = time.monotonic()
        error = self.assertRaises(base.FenceError, driver.power_off)
        self.assertLess(time.monotonic() - started, 1 + SLACK)
        self.assertEqual('%s off: no answer within 1 s' % agent, str(error))
        for name in ('agent.pid', 'child.pid'):
            with open(os.path.join(directory, name)) as pid:
                pid = int(pid.read())
            self.assertTrue(processes.wait_until(lambda: _gone(pid),
                                                 timeout=10), name)


def _gone(pid):
    """Whether process ``pid`` has ended (a zombie has)."""
    try:
        with open('/proc/%d/stat' % pid) as status:
            return status.read().rsplit(')', 1)[1].split()[0] == 'Z'
    except FileNotFoundError:
        return True


def _checksum(data):
    return -sum(data) & 0xff


def _get_channel_auth_cap():
    """Get Channel Authentication Capabilities: how every login starts.

    IPMI 1.5 framing, outside any session (sequence and session id 0).
    """
    header = bytes([0x20, 0x06 << 2])
    body = bytes([0x81, 0, 0x38, 0x8e, 0x04])
    message = header + bytes([_checksum(header)]) + body + bytes(
        [_checksum(body)])
    return b'\x06\x00\xff\x07\x00' + bytes(8) + bytes([len(message)]) + \
        message


def _open_session_request(length=32):
    """An RMCP+ Open Session Request for cipher suite 3, cut at ``length``."""
    payload = (bytes([1, 0, 0, 0]) + b'\xa1\xa2\xa3\xa4' +
               bytes([0, 0, 0, 8, 1, 0, 0, 0, 1, 0, 0, 8, 1, 0, 0, 0,
                      2, 0, 0, 8, 1, 0, 0, 0]))[:length]
    return (b'\x06\x00\xff\x07\x06\x10' + bytes(8) +
            len(payload).to_bytes(2, 'little') + payload)


@testtools.skipIf(shutil.which('ipmitool') is None,
                  'ipmitool is not installed (apt-get install ipmitool)')
class TestSimulatedBmcSurvives(testtools.TestCase):

    def setUp(self):
        super().setUp()
        self.bmc = self.useFixture(SimulatedBmc())
        self.client = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
        self.client.bind(('127.0.0.1', 0))
        self.client.settimeout(10)
        self.addCleanup(self.client.close)

    def send(self, *packets):
        for packet in packets:
            self.client.sendto(packet, ('127.0.0.1', self.bmc.port))

    def assertServes(self):
        """The BMC answers ipmitool and the monitor's driver."""
        result = processes.run([
            'ipmitool', '-I', 'lanplus', '-C', '3', '-H', '127.0.0.1',
            '-p', str(self.bmc.port), '-U', USER, '-P', self.bmc.password,
            'chassis', 'power', 'status'], timeout=30)
        self.assertEqual('Chassis Power is on', result.stdout.strip(),
                         result.stderr + self.bmc.process.output())
        self.assertEqual(base.ON, self.bmc.ipmi(timeout=10).power_state())
        self.assertTrue(self.bmc.alive())

    def test_a_client_starting_again_from_its_session(self):
        # What killed it in a walkthrough: a client with a session open
        # (pyghmi's, whose socket every session shares) logs in again
        # from the same port, and its first packet comes twice (a
        # retransmission) before the BMC reads either.
        self.send(_open_session_request())
        self.assertEqual(b'\x06\x00\xff\x07\x06\x11',
                         self.client.recv(4096)[:6])
        os.kill(self.bmc.process.process.pid, signal.SIGSTOP)
        try:
            self.send(*[_get_channel_auth_cap()] * 3)
        finally:
            os.kill(self.bmc.process.process.pid, signal.SIGCONT)
        for _ in range(3):
            self.assertEqual(0x38, self.client.recv(4096)[19])
        self.assertServes()

    def test_garbage_and_cut_packets(self):
        rmcp = b'\x06\x00\xff\x07'
        self.send(
            b'', b'\x06', os.urandom(21), os.urandom(100),
            rmcp + os.urandom(40),
            # Open Session Requests cut short, the session they open
            # sent a packet of no session, and one without a payload.
            _open_session_request(length=10), _get_channel_auth_cap(),
            _open_session_request(length=0),
            # An IPMI 2.0 message too short for its own header.
            rmcp + b'\x06\x00' + bytes(16),
            # RAKP messages 1 and 3 for sessions never opened.
            rmcp + b'\x06\x12' + bytes(10) + os.urandom(40),
            rmcp + b'\x06\x14' + bytes(10) + os.urandom(30),
            # An IPMI 1.5 message with an authentication code, cut.
            rmcp + b'\x02' + os.urandom(12))
        self.assertServes()
        self.assertIn('dropped a packet it could not handle',
                      self.bmc.process.output())
