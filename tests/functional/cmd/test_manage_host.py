"""nova-forcedown-manage host commands on a file database.

Rows are written and read with sqlite3, as another process would.
"""

import datetime
import uuid

from oslotest import base

from tests.fixtures import commands


def _now():
    return datetime.datetime.now(datetime.timezone.utc).replace(
        tzinfo=None).isoformat(' ')


class TestHostCommands(base.BaseTestCase):
    """compute-a (forced down) runs two servers, compute-b (up) one."""

    def setUp(self):
        super().setUp()
        # compute-b stays up, without an agent, for as long as a test runs.
        self.database = self.useFixture(
            commands.DatabaseFile(service_down_time=600))
        self._service('compute-a', forced_down=1)
        self._service('compute-b')
        self.web = self._server('compute-a', 'web', 'active', None)
        self.db = self._server('compute-a', 'db', 'active', 'powering-off')
        self.other = self._server('compute-b', 'other', 'active', None)

    def _insert(self, table, values):
        self.database.execute('INSERT INTO %s (%s) VALUES (%s)' % (
            table, ', '.join('"%s"' % column for column in values),
            ', '.join('?' * len(values))), *values.values())

    def _service(self, host, forced_down=0):
        now = _now()
        self._insert('services', {
            'uuid': str(uuid.uuid4()), 'host': host, 'binary': 'nova-compute',
            'topic': 'compute', 'report_count': 1, 'disabled': 0,
            'forced_down': forced_down, 'version': 1, 'created_at': now,
            'updated_at': now, 'last_seen_up': now, 'deleted': 0})

    def _server(self, host, name, vm_state, task_state):
        server_uuid = str(uuid.uuid4())
        self._insert('instances', {
            'uuid': server_uuid, 'display_name': name, 'host': host,
            'node': host, 'vm_state': vm_state, 'task_state': task_state,
            'power_state': 1, 'created_at': _now(), 'deleted': 0})
        return server_uuid

    def _states(self, server_uuid):
        row = self.database.query(
            'SELECT vm_state, task_state, power_state FROM instances '
            'WHERE uuid = ?', server_uuid)[0]
        return row['vm_state'], row['task_state'], row['power_state']

    def _actions(self, server_uuid):
        return [row['action'] for row in self.database.query(
            'SELECT action FROM instance_actions WHERE instance_uuid = ?',
            server_uuid)]

    def manage(self, *args):
        result = commands.manage(self.database, *args)
        self.assertNotIn('Traceback', result.stderr)
        return result

    def test_mark_shutdown_prints_what_it_changed(self):
        result = self.manage('host', 'mark-shutdown', 'compute-a')

        self.assertEqual(0, result.returncode, result.stderr)
        rows = {row['Name']: row
                for row in commands.parse_table(result.stdout)}
        self.assertEqual(('active', '1 -> 4', 'None'),
                         (rows['web']['VM State'], rows['web']['Power State'],
                          rows['web']['Task State']))
        self.assertEqual(('active -> stopped', '1 -> 4',
                          'powering-off -> None'),
                         (rows['db']['VM State'], rows['db']['Power State'],
                          rows['db']['Task State']))
        self.assertIn('Marked 2 server(s) of compute-a shut down.',
                      result.stdout)
        self.assertEqual(('active', None, 4), self._states(self.web))
        self.assertEqual(('stopped', None, 4), self._states(self.db))
        self.assertEqual(['markShutdown'], self._actions(self.web))
        self.assertEqual(('active', None, 1), self._states(self.other))

    def test_reset_state_to_error_by_default_or_active(self):
        result = self.manage('host', 'reset-state', 'compute-a')

        self.assertEqual(0, result.returncode, result.stderr)
        self.assertIn('Reset 2 server(s) of compute-a to error.',
                      result.stdout)
        self.assertEqual(('error', None, 1), self._states(self.db))

        result = self.manage('host', 'reset-state', 'compute-a', '--active')

        self.assertIn('Reset 2 server(s) of compute-a to active.',
                      result.stdout)
        self.assertEqual(('active', None, 1), self._states(self.web))
        self.assertEqual(['resetState', 'resetState'],
                         self._actions(self.web))

    def test_nothing_to_change_says_so(self):
        self.manage('host', 'mark-shutdown', 'compute-a')

        result = self.manage('host', 'mark-shutdown', 'compute-a')

        self.assertEqual(0, result.returncode, result.stderr)
        self.assertEqual('Marked 0 server(s) of compute-a shut down.\n',
                         result.stdout)

    def test_refused_while_the_service_is_up(self):
        result = self.manage('host', 'mark-shutdown', 'compute-b')

        self.assertEqual(1, result.returncode)
        self.assertIn('nova-forcedown-manage: Compute service of compute-b '
                      'is still up', result.stderr)
        self.assertEqual(('active', None, 1), self._states(self.other))
        self.assertEqual([], self._actions(self.other))

    def test_an_unknown_host(self):
        result = self.manage('host', 'reset-state', 'nowhere')

        self.assertEqual(1, result.returncode)
        self.assertEqual('nova-forcedown-manage: Compute host nowhere could '
                         'not be found.\n', result.stderr)

    def test_force_down_marks_the_servers_when_configured(self):
        with open(self.database.config_file, 'a') as config:
            config.write('\n[DEFAULT]\n'
                         'force_down_marks_instances_shutdown = true\n')

        result = self.manage('service', 'force-down', 'compute-b')

        self.assertEqual(0, result.returncode, result.stderr)
        self.assertIn('Service nova-compute on compute-b is forced down and '
                      'its servers are marked shut down', result.stdout)
        self.assertEqual(1, self.database.services(
            host='compute-b')[0]['forced_down'])
        self.assertEqual(('active', None, 4), self._states(self.other))
        self.assertEqual(['markShutdown'], self._actions(self.other))

    def test_force_down_by_default_marks_nothing(self):
        result = self.manage('service', 'force-down', 'compute-b')

        self.assertEqual(0, result.returncode, result.stderr)
        self.assertEqual(('active', None, 1), self._states(self.other))
