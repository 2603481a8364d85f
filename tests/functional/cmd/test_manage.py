"""nova-forcedown-manage run as an operator runs it, on a temporary SQLite."""

import os
import socket
import subprocess
import sys

import fixtures
from oslotest import base

from nova_forcedown.db import schema

HEAD = schema.head_revision()


def _closed_port():
    """A local TCP port that nothing listens on."""
    with socket.socket() as probe:
        probe.bind(('127.0.0.1', 0))
        return probe.getsockname()[1]


class ManageTestCase(base.BaseTestCase):

    def setUp(self):
        super().setUp()
        self.directory = self.useFixture(fixtures.TempDir()).path
        self.database = os.path.join(self.directory, 'state', 'nf.sqlite')

    def _config(self, text=None):
        if text is None:
            text = '[database]\nconnection = sqlite:///%s\n' % self.database
        path = os.path.join(self.directory, 'nova_forcedown.conf')
        with open(path, 'w') as config_file:
            config_file.write(text)
        return path

    def _manage(self, *args, config=None):
        env = dict(os.environ, HOME=self.directory)
        return subprocess.run(
            [sys.executable, '-m', 'nova_forcedown.cmd.manage',
             '--config-file', config or self._config(), *args],
            capture_output=True, text=True, env=env, cwd=self.directory,
            timeout=120)

    def _assert_success(self, result, output):
        self.assertEqual(0, result.returncode, result.stderr)
        self.assertEqual(output, result.stdout.strip())

    def _assert_one_line_failure(self, result, returncode, *fragments):
        self.assertEqual(returncode, result.returncode, result.stderr)
        self.assertNotIn('Traceback', result.stderr)
        lines = result.stderr.strip().splitlines()
        self.assertEqual(1, len(lines), result.stderr)
        self.assertTrue(lines[0].startswith('nova-forcedown-manage: '),
                        lines[0])
        for fragment in fragments:
            self.assertIn(fragment, lines[0])
        return lines[0]


class TestDbCommands(ManageTestCase):

    def test_version_of_an_empty_database(self):
        self._assert_success(self._manage('db', 'version'),
                             'None (empty database)')

    def test_sync_then_version_prints_head(self):
        self._assert_success(self._manage('db', 'sync'),
                             'Database is at revision %s.' % HEAD)
        self._assert_success(self._manage('db', 'version'), HEAD)
        self.assertTrue(os.path.isfile(self.database))

    def test_second_sync_is_a_no_op(self):
        self._manage('db', 'sync')
        with open(self.database, 'rb') as before:
            schema = before.read()

        self._assert_success(self._manage('db', 'sync'),
                             'Database is at revision %s.' % HEAD)

        self._assert_success(self._manage('db', 'version'), HEAD)
        with open(self.database, 'rb') as after:
            self.assertEqual(schema, after.read())

    def test_sync_to_a_revision_then_to_head(self):
        self._assert_success(
            self._manage('db', 'sync', '--revision', '0001_initial'),
            'Database is at revision 0001_initial.')
        self._assert_success(self._manage('db', 'sync'),
                             'Database is at revision %s.' % HEAD)


class TestErrors(ManageTestCase):

    def test_bad_config_value_exits_2_naming_the_option(self):
        config = self._config('[DEFAULT]\nreport_interval = often\n'
                              '[database]\nconnection = sqlite:///%s\n'
                              % self.database)
        result = self._manage('db', 'sync', config=config)
        self._assert_one_line_failure(result, 2, 'report_interval')
        self.assertFalse(os.path.exists(self.database))

    def test_unreachable_server_exits_1_on_one_line(self):
        config = self._config(
            '[database]\nconnection = postgresql+psycopg2://nova:secret@'
            '127.0.0.1:%d/nova\n' % _closed_port())
        line = self._assert_one_line_failure(
            self._manage('db', 'version', config=config), 1,
            'cannot use the database at')
        self.assertNotIn('secret', line)

    def test_unusable_sqlite_path_exits_1_on_one_line(self):
        blocker = os.path.join(self.directory, 'not-a-directory')
        open(blocker, 'w').close()
        config = self._config('[database]\nconnection = sqlite:///%s\n'
                              % os.path.join(blocker, 'nf.sqlite'))
        self._assert_one_line_failure(
            self._manage('db', 'sync', config=config), 1, blocker)
