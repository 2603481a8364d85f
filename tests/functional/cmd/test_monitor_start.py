"""The monitor started before its database is ready waits for it.

As the agent does (test_compute_agent): a database away, or with its
schema behind the code, is said once and waited for, paced by
``[database] max_retries`` and ``retry_interval``; when the tries run out
the monitor stops with one line that says what to do.
"""

import signal
import sqlite3

from oslotest import base

from tests.fixtures import commands

STARTED = 'looks every'


class TestMonitorWaitsForTheDatabase(base.BaseTestCase):

    def _database(self, max_retries, migrate=True, options=''):
        database = self.useFixture(commands.DatabaseFile(
            migrate=migrate, options=options))
        with open(database.config_file, 'a') as config:
            config.write('max_retries = %d\nretry_interval = 1\n' %
                         max_retries)
        return database

    def test_waits_for_the_schema_then_watches(self):
        database = self._database(max_retries=30, migrate=False)
        monitor = self.useFixture(commands.MonitorProcess(database))
        self.assertTrue(monitor.wait_for_log('Cannot start yet'),
                        monitor.log())
        self.assertIn('run nova-forcedown-manage db sync', monitor.log())
        self.assertNotIn(STARTED, monitor.log())

        self.assertEqual(0, commands.manage(database, 'db', 'sync').returncode)

        self.assertTrue(monitor.wait_for_log(STARTED), monitor.log())
        log = monitor.log()
        self.assertIn('The database schema is current', log)
        self.assertEqual(1, log.count('Cannot start yet'), log)
        self.assertNotIn('Traceback', log)

    def test_waits_for_a_locked_database_then_watches(self):
        database = self._database(max_retries=30, options='timeout=0.1')
        lock = sqlite3.connect(database.path, isolation_level=None)
        self.addCleanup(lock.close)
        lock.execute('BEGIN EXCLUSIVE')
        monitor = self.useFixture(commands.MonitorProcess(database))
        self.assertTrue(monitor.wait_for_log('Cannot start, the database is '
                                             'unavailable'), monitor.log())
        self.assertNotIn(STARTED, monitor.log())

        lock.execute('ROLLBACK')

        self.assertTrue(monitor.wait_for_log(STARTED), monitor.log())
        self.assertIn('Recovered', monitor.log())
        self.assertNotIn('Traceback', monitor.log())

    def test_unmigrated_database_gives_up_in_one_line(self):
        database = self._database(max_retries=2, migrate=False)
        monitor = self.useFixture(commands.MonitorProcess(database))

        self.assertEqual(1, monitor.process.wait(30))
        log = monitor.log()
        self.assertNotIn('Traceback', log)
        waited, error = log.strip().splitlines()
        self.assertIn('up to 2 times', waited)
        self.assertIn('nova-forcedown-monitor: ', error)
        self.assertIn('run nova-forcedown-manage db sync', error)

    def test_sigterm_while_waiting_exits_cleanly(self):
        database = self._database(max_retries=-1, migrate=False)
        monitor = self.useFixture(commands.MonitorProcess(database))
        self.assertTrue(monitor.wait_for_log('until it answers'),
                        monitor.log())

        monitor.process.send_signal(signal.SIGTERM)
        self.assertEqual(0, monitor.process.wait(5))
        self.assertNotIn('Traceback', monitor.log())
