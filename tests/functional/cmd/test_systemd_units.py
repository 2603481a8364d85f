"""The systemd units in etc/systemd, as an operator installs them.

systemd does not run the tests' machine, so each unit is checked as far
as can be without it: ``systemd-analyze verify`` (its sections, keys and
that its program exists, the install prefix replaced by this
environment's), then its command line, run as the unit runs it, starts
and stops on SIGTERM with status 0, which ``Restart=on-failure`` leaves
stopped.
"""

import configparser
import os
import shlex
import shutil
import signal

import fixtures
import testtools

from tests.fixtures import commands
from tests.fixtures import processes

UNITS_DIR = os.path.join(os.path.dirname(processes.__file__), '..', '..',
                         'etc', 'systemd')
INSTALL_BIN = '/opt/nova-forcedown/bin/'
INSTALL_CONFIG = '/etc/nova_forcedown/nova_forcedown.conf'
# What each logs once SIGTERM is its to handle: for the API, gunicorn's
# arbiter has set its signal handlers before it boots a worker (our own
# "listening on" line comes before that, and a SIGTERM then kills it).
SERVICES = {'nova-forcedown-api.service': 'Booting worker',
            'nova-forcedown-compute.service': 'Heartbeating',
            # The monitor, its compute API not started, waits for it.
            'nova-forcedown-monitor.service': 'Cannot start yet',
            'nova-forcedown-pulse.service': 'Pulsing'}
# systemd's default when a unit sets no TimeoutStopSec.
DEFAULT_STOP_SECONDS = 90


def read_unit(name):
    with open(os.path.join(UNITS_DIR, name)) as unit:
        text = unit.read()
    parser = configparser.ConfigParser(interpolation=None, strict=False)
    parser.optionxform = str
    parser.read_string(text)
    return text, parser


class TestSystemdUnits(testtools.TestCase):

    def setUp(self):
        super().setUp()
        self.directory = self.useFixture(fixtures.TempDir()).path

    def test_each_long_running_command_has_a_unit(self):
        self.assertEqual(sorted(SERVICES), sorted(
            name for name in os.listdir(UNITS_DIR)
            if name.endswith('.service')))

    @testtools.skipIf(shutil.which('systemd-analyze') is None,
                      'systemd-analyze is not installed')
    def test_units_verify(self):
        paths = []
        for name in SERVICES:
            text, _ = read_unit(name)
            path = os.path.join(self.directory, name)
            with open(path, 'w') as unit:
                unit.write(text.replace(INSTALL_BIN,
                                        processes.BIN_DIR + os.sep))
            paths.append(path)
        result = processes.run(['systemd-analyze', 'verify', *paths])
        self.assertEqual(0, result.returncode, result.stderr)
        self.assertEqual('', result.stdout + result.stderr)

    def test_command_lines_start_and_stop_cleanly_on_sigterm(self):
        database = self.useFixture(commands.DatabaseFile())
        # The pulse heartbeats to tooz's file backend: no Redis needed.
        with open(database.config_file, 'a') as config:
            config.write('[api]\nauth_strategy = noauth2\n'
                         '[wsgi]\nport = %d\n'
                         '[coordination]\nbackend_url = file://%s\n'
                         '[compute_api]\nauth_type = admin_token\n'
                         'token = admin:admin\n'
                         'endpoint = http://127.0.0.1:%d/v2.1\n' % (
                             processes.free_port(), self.directory,
                             processes.free_port()))
        for name, started in SERVICES.items():
            _, unit = read_unit(name)
            argv = [arg.replace(INSTALL_BIN, processes.BIN_DIR + os.sep)
                    .replace(INSTALL_CONFIG, database.config_file)
                    for arg in shlex.split(unit['Service']['ExecStart'])]
            self.assertEqual('on-failure', unit['Service']['Restart'])
            stop_seconds = int(unit['Service'].get('TimeoutStopSec',
                                                   DEFAULT_STOP_SECONDS))
            self._start_and_stop(name, argv, started, stop_seconds)

    def _start_and_stop(self, name, argv, started, stop_seconds):
        service = self.useFixture(processes.Process(argv))
        self.assertTrue(processes.wait_until(
            lambda: started in service.output() or
            service.process.poll() is not None, timeout=60),
            service.output())
        self.assertIsNone(service.process.poll(), service.output())
        self.assertEqual(0, service.stop(signal.SIGTERM, stop_seconds),
                         (name, service.output()))
        self.assertNotIn('Traceback', service.output())
