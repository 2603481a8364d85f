"""The monitor at start: a compute API away is waited for, a refusal said.

The monitor is a client of a compute API. Started before it answers (at
boot, beside an API still starting), it says so once and waits; a
refusal that waiting would not change (credentials, a role, no
``[compute_api]`` at all) stops it with one line that names what to fix.
"""

import os
import signal

from oslotest import base

from tests.fixtures import commands
from tests.fixtures import processes

STARTED = 'looks every'


class MonitorStartTestCase(base.BaseTestCase):

    def _config(self, token='admin:admin', compute_api=True):
        """A database file's config, a [compute_api] on a free port."""
        database = self.useFixture(commands.DatabaseFile())
        self.port = processes.free_port()
        if compute_api:
            with open(database.config_file, 'a') as config:
                config.write(
                    '[api]\nauth_strategy = noauth2\n'
                    '[wsgi]\nworkers = 1\nthreads = 2\n'
                    '[compute_api]\nauth_type = admin_token\n'
                    'token = %s\nendpoint = http://127.0.0.1:%d/v2.1\n'
                    % (token, self.port))
        return database

    def _start_api(self, database):
        api = self.useFixture(processes.Process([
            processes.script('nova-forcedown-api'), '--config-file',
            database.config_file, '--port', str(self.port)]))
        processes.wait_for_http('http://127.0.0.1:%d/' % self.port,
                                process=api.process)
        return api


class TestMonitorWaitsForTheComputeAPI(MonitorStartTestCase):

    def test_waits_for_the_api_then_watches(self):
        database = self._config()
        monitor = self.useFixture(commands.MonitorProcess(database))
        self.assertTrue(monitor.wait_for_log(
            'Cannot start yet, the compute API does not answer'),
            monitor.log())
        self.assertNotIn(STARTED, monitor.log())

        self._start_api(database)

        self.assertTrue(monitor.wait_for_log(STARTED), monitor.log())
        log = monitor.log()
        self.assertIn('The compute API answers, after', log)
        self.assertIn('acts through the compute API at '
                      'http://127.0.0.1:%d/v2.1' % self.port, log)
        self.assertEqual(1, log.count('Cannot start yet'), log)
        self.assertNotIn('Traceback', log)

    def test_sigterm_while_waiting_exits_cleanly(self):
        monitor = self.useFixture(commands.MonitorProcess(self._config()))
        self.assertTrue(monitor.wait_for_log('Cannot start yet'),
                        monitor.log())

        monitor.process.send_signal(signal.SIGTERM)
        self.assertEqual(0, monitor.process.wait(5))
        self.assertNotIn('Traceback', monitor.log())


class TestMonitorRefused(MonitorStartTestCase):

    def test_a_user_without_the_admin_role_stops_it_in_one_line(self):
        database = self._config(token='demo:demo')
        self._start_api(database)
        monitor = self.useFixture(commands.MonitorProcess(database))

        self.assertEqual(1, monitor.process.wait(30))
        log = monitor.log().strip()
        self.assertNotIn('Traceback', log)
        self.assertEqual(1, len(log.splitlines()), log)
        self.assertIn('nova-forcedown-monitor: GET /os-services: 403', log)

    def test_no_compute_api_configured_stops_it_at_once(self):
        monitor = self.useFixture(commands.MonitorProcess(
            self._config(compute_api=False)))

        self.assertEqual(2, monitor.process.wait(30))
        log = monitor.log().strip()
        self.assertEqual(1, len(log.splitlines()), log)
        self.assertIn('[compute_api]', log)

    def test_a_cloud_that_clouds_yaml_lacks_stops_it_at_once(self):
        database = self._config(compute_api=False)
        with open(database.config_file, 'a') as config:
            config.write('[compute_api]\ncloud = no-such-cloud\n')
        monitor = self.useFixture(commands.MonitorProcess(
            database, env={'OS_CLIENT_CONFIG_FILE': os.path.join(
                database.state_path, 'clouds.yaml')}))

        self.assertEqual(2, monitor.process.wait(30))
        log = monitor.log().strip()
        self.assertEqual(1, len(log.splitlines()), log)
        self.assertIn("[compute_api] cloud 'no-such-cloud'", log)

    def test_reserved_hosts_are_needed_by_their_recovery_method(self):
        database = self._config()
        with open(database.config_file, 'a') as config:
            config.write('[monitor]\nrecovery_method = reserved_host\n')
        monitor = self.useFixture(commands.MonitorProcess(database))

        self.assertEqual(2, monitor.process.wait(30))
        log = monitor.log().strip()
        self.assertEqual(1, len(log.splitlines()), log)
        self.assertIn('[monitor] recovery_method reserved_host needs '
                      'reserved_hosts', log)
