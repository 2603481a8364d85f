"""nova-forcedown-manage service commands against a heartbeating agent."""

import datetime
import getpass
import time
import uuid

from oslotest import base

from tests.fixtures import commands


def _utcnow():
    return datetime.datetime.now(datetime.timezone.utc).replace(tzinfo=None)


# Notifications on, to a broker that refuses every connection.
BROKER_AWAY = ('[DEFAULT]\ntransport_url = rabbit://guest:guest@127.0.0.1:1/\n'
               '[notifications]\nnotification_format = versioned\n'
               '[oslo_messaging_notifications]\ndriver = messagingv2\n')


class ServiceCommandTestCase(base.BaseTestCase):

    def setUp(self):
        super().setUp()
        self.database = self.useFixture(commands.DatabaseFile())

    def manage(self, *args):
        result = commands.manage(self.database, *args)
        self.assertNotIn('Traceback', result.stderr)
        return result

    def service_list(self):
        result = self.manage('service', 'list')
        self.assertEqual(0, result.returncode, result.stderr)
        return {row['Host']: row
                for row in commands.parse_table(result.stdout)}

    def start_agent(self, *args, host='compute-a', minimum=1):
        agent = self.useFixture(commands.AgentProcess(self.database, *args))
        self.assertTrue(commands.wait_until(
            lambda: self.report_count(host) >= minimum))
        return agent

    def add_service(self, host, **columns):
        """A nova-compute row, as if it had heartbeat just now."""
        now = _utcnow().isoformat(' ')
        values = dict({'uuid': str(uuid.uuid4()), 'host': host,
                       'binary': 'nova-compute', 'topic': 'compute',
                       'report_count': 1, 'disabled': 0, 'forced_down': 0,
                       'version': 1, 'created_at': now, 'updated_at': now,
                       'last_seen_up': now, 'deleted': 0}, **columns)
        self.database.execute(
            'INSERT INTO services (%s) VALUES (%s)' % (
                ', '.join('"%s"' % column for column in values),
                ', '.join('?' * len(values))), *values.values())

    def report_count(self, host):
        rows = self.database.services(host=host)
        return rows[0]['report_count'] if rows else 0


class TestServiceList(ServiceCommandTestCase):

    def test_lists_every_service_with_state_and_status(self):
        self.useFixture(commands.AgentProcess(
            self.database, '--binary', 'nova-conductor', '--host', 'ctl'))
        self.start_agent('--driver', 'fake', '--hosts', '2',
                         '--host-prefix', 'cn', host='cn2')
        self.assertTrue(commands.wait_until(
            lambda: self.report_count('ctl') >= 1))

        listed = self.service_list()

        stored = {row['host']: row for row in self.database.services()}
        self.assertEqual({'cn1', 'cn2', 'ctl'}, set(listed))
        for host, row in listed.items():
            self.assertEqual(str(stored[host]['id']), row['Id'])
            self.assertEqual(stored[host]['uuid'], row['UUID'])
            self.assertEqual(('enabled', 'up', 'False', 'None'),
                             (row['Status'], row['State'],
                              row['Forced Down'], row['Disabled Reason']))
        self.assertEqual(('nova-compute', 'nova'),
                         (listed['cn1']['Binary'], listed['cn1']['Zone']))
        self.assertEqual(('nova-conductor', 'internal'),
                         (listed['ctl']['Binary'], listed['ctl']['Zone']))

    def test_stopped_agent_is_down_only_after_service_down_time(self):
        agent = self.start_agent('--host', 'compute-a')
        self.assertEqual(0, agent.stop())
        last_seen_up = datetime.datetime.fromisoformat(
            self.database.services()[0]['last_seen_up'])
        down_at = last_seen_up + datetime.timedelta(
            seconds=commands.SERVICE_DOWN_TIME)

        deadline = time.monotonic() + 20
        while time.monotonic() < deadline:
            started = _utcnow()
            state = self.service_list()['compute-a']['State']
            if _utcnow() < down_at:
                self.assertEqual('up', state)
            elif started > down_at:
                self.assertEqual('down', state)
                return
            time.sleep(0.2)
        self.fail('The stopped service never went down.')


class TestServiceActions(ServiceCommandTestCase):

    def test_force_down_is_immediate_and_outlives_heartbeats(self):
        agent = self.start_agent('--host', 'compute-a')

        result = self.manage('service', 'force-down', 'compute-a')

        self.assertEqual(0, result.returncode, result.stderr)
        row = self.service_list()['compute-a']
        self.assertEqual(('True', 'down'), (row['Forced Down'], row['State']))
        count = self.report_count('compute-a')
        self.assertTrue(commands.wait_until(
            lambda: self.report_count('compute-a') > count + 1))
        self.assertTrue(agent.wait_for_log('compute-a is forced down'))
        self.assertEqual(1, self.database.services()[0]['forced_down'])

    def test_unset_brings_a_heartbeating_service_up_at_once(self):
        self.start_agent('--host', 'compute-a')
        self.database.execute('UPDATE services SET forced_down = 1')

        result = self.manage('service', 'force-down', 'compute-a', '--unset')

        self.assertEqual(0, result.returncode, result.stderr)
        row = self.service_list()['compute-a']
        self.assertEqual(('False', 'up'), (row['Forced Down'], row['State']))

    def test_disable_with_reason(self):
        self.add_service('compute-a')

        result = self.manage('service', 'disable', 'compute-a', '--reason',
                             'kernel upgrade')

        self.assertEqual(0, result.returncode, result.stderr)
        row = self.service_list()['compute-a']
        self.assertEqual(('disabled', 'kernel upgrade', 'False'),
                         (row['Status'], row['Disabled Reason'],
                          row['Forced Down']))

    def test_a_broker_away_is_one_line_and_the_change_stands(self):
        self.add_service('compute-a')
        with open(self.database.config_file, 'a') as config:
            config.write(BROKER_AWAY)

        result = self.manage('service', 'disable', 'compute-a')

        self.assertEqual(0, result.returncode, result.stderr)
        output = result.stdout + result.stderr
        self.assertNotIn('Traceback', output)
        errors = [line for line in output.splitlines() if ' ERROR ' in line]
        self.assertEqual(1, len(errors), output)
        self.assertIn('Could not send a notification to', errors[0])
        self.assertIn('Connection refused', errors[0])
        self.assertEqual('disabled',
                         self.service_list()['compute-a']['Status'])

    def test_enable_clears_the_reason(self):
        self.add_service('compute-a', disabled=1,
                         disabled_reason='kernel upgrade')

        result = self.manage('service', 'enable', 'compute-a')

        self.assertEqual(0, result.returncode, result.stderr)
        row = self.service_list()['compute-a']
        self.assertEqual(('enabled', 'None'),
                         (row['Status'], row['Disabled Reason']))

    def test_unknown_host_is_a_one_line_error(self):
        for args in (('force-down', 'nowhere'), ('disable', 'nowhere')):
            result = self.manage('service', *args)
            self.assertEqual(1, result.returncode)
            self.assertEqual(
                'nova-forcedown-manage: Could not find binary nova-compute '
                'on host nowhere.', result.stderr.strip())


class TestUnmigratedDatabase(base.BaseTestCase):

    def test_service_commands_ask_for_db_sync(self):
        database = self.useFixture(commands.DatabaseFile(migrate=False))
        for args in (('list',), ('force-down', 'compute-a')):
            result = commands.manage(database, 'service', *args)
            self.assertEqual(1, result.returncode)
            self.assertNotIn('Traceback', result.stderr)
            self.assertEqual(1, len(result.stderr.strip().splitlines()),
                             result.stderr)
            self.assertIn('run nova-forcedown-manage db sync',
                          result.stderr)


class TestServiceHistory(ServiceCommandTestCase):

    def history(self, host, *args):
        result = self.manage('service', 'history', host, *args)
        self.assertEqual(0, result.returncode, result.stderr)
        return commands.parse_table(result.stdout)

    def test_every_change_is_listed_newest_first(self):
        self.add_service('compute-a')
        for args in (('force-down', 'compute-a'),
                     ('disable', 'compute-a', '--reason', 'fenced'),
                     ('enable', 'compute-a'),
                     ('force-down', 'compute-a', '--unset')):
            self.assertEqual(0, self.manage('service', *args).returncode)

        rows = self.history('compute-a')

        self.assertEqual(['clear-force-down', 'enable', 'disable',
                          'force-down'], [row['Event'] for row in rows])
        self.assertEqual(
            ['forced_down: True -> False',
             'disabled: True -> False; disabled_reason: fenced -> None',
             'disabled: False -> True; disabled_reason: None -> fenced',
             'forced_down: False -> True'],
            [row['Changes'] for row in rows])
        # The operator who ran the command, by login name.
        for row in rows:
            self.assertEqual((getpass.getuser(), '-'),
                             (row['User'], row['Project']))
            self.assertRegex(row['Request Id'], '^req-')
            self.assertRegex(row['Time'], r'^\d{4}-\d\d-\d\dT')

    def test_limit_keeps_the_newest(self):
        self.add_service('compute-a')
        self.manage('service', 'force-down', 'compute-a')
        self.manage('service', 'disable', 'compute-a')
        self.assertEqual(['disable'], [
            row['Event'] for row in self.history('compute-a', '--limit', '1')])

    def test_a_host_without_changes_has_an_empty_table(self):
        self.add_service('compute-a')
        self.assertEqual([], self.history('compute-a'))

    def test_unknown_host_is_a_one_line_error(self):
        result = self.manage('service', 'history', 'nowhere')
        self.assertEqual(1, result.returncode)
        self.assertEqual('nova-forcedown-manage: Could not find binary '
                         'nova-compute on host nowhere.',
                         result.stderr.strip())


class TestFenceStormGuard(ServiceCommandTestCase):

    def test_force_down_over_the_fraction_is_refused(self):
        for host in ('compute-a', 'compute-b'):
            self.add_service(host)
        with open(self.database.config_file, 'a') as config:
            config.write('\n[fencing]\nmax_forced_down_fraction = 0.5\n')
        self.assertEqual(
            0, self.manage('service', 'force-down', 'compute-a').returncode)

        result = self.manage('service', 'force-down', 'compute-b')

        self.assertEqual(1, result.returncode)
        self.assertEqual(
            'nova-forcedown-manage: Forcing compute-b down would put 2 of 2 '
            'compute hosts of zone nova forced down, more than [fencing] '
            'max_forced_down_fraction 0.5 allows.', result.stderr.strip())
        self.assertEqual([1, 0], [row['forced_down']
                                  for row in self.database.services()])
