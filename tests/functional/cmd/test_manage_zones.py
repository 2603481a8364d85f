"""nova-forcedown-manage aggregate list and availability_zone list, for
operators without the API, on a database an agent and SQL filled."""

import datetime
import uuid

from tests.fixtures import commands
from tests.functional.cmd import test_manage_service


def _rows(result):
    return commands.parse_table(result.stdout)


class ZoneCommandTestCase(test_manage_service.ServiceCommandTestCase):

    def add_aggregate(self, name, hosts=(), **metadata):
        """An aggregate written with SQL, as if made through the API."""
        now = datetime.datetime.now(datetime.timezone.utc).replace(
            tzinfo=None).isoformat(' ')
        self.database.execute(
            'INSERT INTO aggregates (uuid, name, created_at) VALUES (?, ?, ?)',
            str(uuid.uuid4()), name, now)
        [row] = self.database.query(
            'SELECT id FROM aggregates WHERE name = ?', name)
        for host in hosts:
            self.database.execute(
                'INSERT INTO aggregate_hosts (aggregate_id, host, created_at)'
                ' VALUES (?, ?, ?)', row['id'], host, now)
        for key, value in metadata.items():
            self.database.execute(
                'INSERT INTO aggregate_metadata (aggregate_id, key, value, '
                'created_at) VALUES (?, ?, ?, ?)', row['id'], key, value, now)
        return row['id']

    def list_ok(self, *args):
        result = self.manage(*args)
        self.assertEqual(0, result.returncode, result.stderr)
        return _rows(result)


class TestAggregateList(ZoneCommandTestCase):

    def test_aggregates_with_zone_hosts_and_properties(self):
        self.start_agent('--driver', 'fake', '--hosts', '2',
                         '--host-prefix', 'cn', '--availability-zone', 'az1',
                         host='cn2')
        gpu = self.add_aggregate('gpu', ['cn1'], ssd='true', gpus='2')
        self.add_aggregate('spare')

        listed = {row['Name']: row for row in self.list_ok('aggregate',
                                                           'list')}

        [zone] = self.database.query(
            "SELECT id, uuid FROM aggregates WHERE name = 'az1'")
        self.assertEqual({'az1', 'gpu', 'spare'}, set(listed))
        self.assertEqual(
            {'Id': str(zone['id']), 'UUID': zone['uuid'], 'Name': 'az1',
             'Availability Zone': 'az1', 'Hosts': 'cn1, cn2',
             'Properties': ''}, listed['az1'])
        self.assertEqual((str(gpu), 'None', 'cn1', 'gpus=2, ssd=true'),
                         (listed['gpu']['Id'],
                          listed['gpu']['Availability Zone'],
                          listed['gpu']['Hosts'],
                          listed['gpu']['Properties']))
        self.assertEqual('', listed['spare']['Hosts'])

    def test_no_aggregates_is_an_empty_table(self):
        result = self.manage('aggregate', 'list')
        self.assertEqual(0, result.returncode, result.stderr)
        self.assertEqual([], _rows(result))
        self.assertIn('Availability Zone', result.stdout)


class TestAvailabilityZoneList(ZoneCommandTestCase):

    def test_zones_with_their_services_and_state(self):
        # One agent after the other: two starting at once on a loaded
        # machine have come close to the wait's limit.
        self.start_agent('--driver', 'fake', '--hosts', '2',
                         '--host-prefix', 'cn', '--availability-zone', 'az1',
                         host='cn2')
        self.start_agent('--binary', 'nova-conductor', '--host', 'ctl',
                         host='ctl')
        self.add_service('cn3', forced_down=1)
        self.add_service('cn4', disabled=1, disabled_reason='racking')
        self.add_service('cn5', disabled=1)
        self.add_service('api', binary='nova-osapi_compute', topic=None)
        self.add_aggregate('rack-b', ['cn4'], availability_zone='az2')
        self.add_aggregate('rack-c', ['cn5'], availability_zone='az1')
        self.add_aggregate('spare', availability_zone='az3')

        rows = self.list_ok('availability_zone', 'list')

        self.assertEqual(
            [('az1', 'available', 'cn1', 'nova-compute', 'enabled', 'up'),
             ('az1', 'available', 'cn2', 'nova-compute', 'enabled', 'up'),
             ('internal', 'available', 'ctl', 'nova-conductor', 'enabled',
              'up'),
             ('nova', 'available', 'cn3', 'nova-compute', 'enabled',
              'down'),
             ('az2', 'not available', '', '', '', '')],
            [(row['Zone'], row['Zone Status'], row['Host'], row['Binary'],
              row['Status'], row['State']) for row in rows])
        self.assertNotEqual('None', rows[0]['Updated At'])

    def test_commands_ask_for_db_sync(self):
        database = self.useFixture(commands.DatabaseFile(migrate=False))
        for args in (('aggregate', 'list'), ('availability_zone', 'list')):
            result = commands.manage(database, *args)
            self.assertEqual(1, result.returncode)
            self.assertNotIn('Traceback', result.stderr)
            self.assertIn('run nova-forcedown-manage db sync',
                          result.stderr)
