"""No command of the project prints a warning its user cannot act on.

oslo.versionedobjects imports oslo.messaging, which loads oslo.service's
eventlet back end; eventlet warns on import that it is deprecated, and its
resolver's dnspython, when a user turns it back on (the package turns it
off), warns of DSA keys under cryptography 51 and later.
Each command runs here as a real process, as a user runs it (console
script, ``python -m``, the WSGI module, the benchmark), with Python's
default warning filters, and what it printed must carry no such warning.
tox runs these tests in the ``install`` environment, where the package's
own requirements alone pick the libraries' versions, as in a user's fresh
virtual environment; the ``functional`` environment, whose test tools
hold some libraries back, leaves them out. Run them there by name:
``stestr --test-path=./tests/functional run --no-discover
tests.functional.cmd.test_command_warnings``.
"""

from importlib import metadata
import os
import sys

from oslotest import base

import nova_forcedown
from tests.fixtures import commands
from tests.fixtures import processes

# Python's own defaults, whatever the shell running the tests exported.
DEFAULT_WARNINGS = {'PYTHONWARNINGS': ''}

# The checkout, from which ``python -m tools.benchmark`` runs.
CHECKOUT = os.path.dirname(os.path.dirname(
    os.path.abspath(nova_forcedown.__file__)))

# Every console script the package installs: {name: module}.
SCRIPTS = {entry_point.name: entry_point.module
           for entry_point in metadata.entry_points(group='console_scripts')
           if entry_point.module.startswith('nova_forcedown.')}


class TestCommandsAreQuiet(base.BaseTestCase):

    def setUp(self):
        super().setUp()
        self.database = self.useFixture(commands.DatabaseFile())

    def assertQuiet(self, output):
        self.assertNotIn('eventlet', output.lower())
        # Python's own format of any warning: "file:line: SomeWarning: ..."
        self.assertNotRegex(output, r':\d+: \w*Warning: ')

    def _run(self, *argv, env=None, cwd=None):
        env = dict(DEFAULT_WARNINGS, **(env or {}))
        result = processes.run(list(argv), env=env, cwd=cwd)
        self.assertEqual(0, result.returncode, result.stderr)
        return result

    def test_help_of_every_console_script(self):
        self.assertIn('nova-forcedown-monitor', SCRIPTS)
        self.assertIn('nova-forcedown-pulse', SCRIPTS)
        for name in SCRIPTS:
            result = self._run(processes.script(name), '--help')
            self.assertIn('usage', result.stdout.lower())
            self.assertQuiet(result.stderr)

    def test_help_of_every_command_module(self):
        for module in SCRIPTS.values():
            result = self._run(sys.executable, '-m', module, '--help')
            self.assertQuiet(result.stderr)

    def test_benchmark_help(self):
        result = self._run(sys.executable, '-m', 'tools.benchmark', '--help',
                           cwd=CHECKOUT)
        self.assertIn('--hosts', result.stdout)
        self.assertQuiet(result.stderr)

    def test_manage_and_status_on_a_database(self):
        config = ('--config-file', self.database.config_file)
        for argv in (('nova-forcedown-manage', *config, 'db', 'version'),
                     ('nova-forcedown-manage', *config, 'service', 'list'),
                     ('nova-forcedown-manage', *config, 'aggregate', 'list'),
                     ('nova-forcedown-manage', *config, 'availability_zone',
                      'list'),
                     ('nova-forcedown-status', *config, 'upgrade',
                      'check')):
            result = self._run(processes.script(argv[0]), *argv[1:])
            self.assertQuiet(result.stderr)

    def test_with_eventlets_resolver_turned_back_on(self):
        result = self._run(
            processes.script('nova-forcedown-manage'), '--config-file',
            self.database.config_file, 'service', 'list',
            env={'EVENTLET_NO_GREENDNS': 'no'})
        self.assertQuiet(result.stderr)

    def test_wsgi_module_import(self):
        result = self._run(
            sys.executable, '-c', 'import nova_forcedown.wsgi.api',
            env={'NOVA_FORCEDOWN_CONFIG_FILE': self.database.config_file})
        self.assertQuiet(result.stderr)

    def test_running_agent(self):
        agent = self.useFixture(processes.Process(
            [processes.script('nova-forcedown-compute'), '--config-file',
             self.database.config_file, '--host', 'compute-a'],
            env=DEFAULT_WARNINGS))
        self.assertTrue(commands.wait_until(
            lambda: [row['report_count'] for row in
                     self.database.services()] >= [2]))
        self.assertEqual(0, agent.stop())
        self.assertQuiet(agent.output())

    def test_running_pulse(self):
        # tooz's file backend: the pulse needs neither Redis nor a database.
        directory = os.path.dirname(self.database.config_file)
        config = processes.write_config(
            directory, '[coordination]\nbackend_url = file://%s\n' %
            os.path.join(directory, 'tooz'))
        pulse = self.useFixture(processes.Process(
            [processes.script('nova-forcedown-pulse'), '--config-file',
             config, '--host', 'compute-a'], env=DEFAULT_WARNINGS))
        self.assertTrue(commands.wait_until(
            lambda: 'Pulsing nova-compute:compute-a' in pulse.output()))
        self.assertEqual(0, pulse.stop())
        self.assertIn('left the group', pulse.output())
        self.assertQuiet(pulse.output())

    def test_running_api_server(self):
        port = processes.free_port()
        server = self.useFixture(processes.Process(
            [processes.script('nova-forcedown-api'), '--dev',
             '--config-file', self.database.config_file,
             '--port', str(port)], env=DEFAULT_WARNINGS))
        processes.wait_for_http('http://127.0.0.1:%d/' % port,
                                process=server.process)
        self.assertEqual(0, server.stop())
        self.assertQuiet(server.output())
