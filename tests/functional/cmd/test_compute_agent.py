"""nova-forcedown-compute as a real process on a real SQLite database."""

import json
import os
import signal
import sqlite3

import fixtures
from oslotest import base

from tests.fixtures import commands


def _report_counts(database, **where):
    return [row['report_count'] for row in database.services(**where)]


def _heartbeating(database, minimum=2, count=1, **where):
    """Whether ``count`` services report and each did ``minimum`` times."""
    counts = _report_counts(database, **where)
    return len(counts) == count and min(counts) >= minimum


class TestLocalAgent(base.BaseTestCase):

    def setUp(self):
        super().setUp()
        self.database = self.useFixture(commands.DatabaseFile())

    def _start(self, *args):
        return self.useFixture(commands.AgentProcess(self.database, *args))

    def test_registers_service_and_node_and_heartbeats(self):
        self._start('--host', 'compute-a', '--availability-zone', 'az1')

        self.assertTrue(commands.wait_until(
            lambda: _heartbeating(self.database, host='compute-a')))
        service = self.database.services(host='compute-a')[0]
        self.assertEqual(('nova-compute', 'compute', 1, 0, 0),
                         (service['binary'], service['topic'],
                          service['version'], service['forced_down'],
                          service['disabled']))
        # Its zone is an aggregate named after it, holding its host.
        self.assertEqual([('az1', 'compute-a', 'az1')], [
            (row['name'], row['host'], row['value']) for row in
            self.database.query(
                'SELECT a.name, h.host, m.value FROM aggregates a '
                'JOIN aggregate_hosts h ON h.aggregate_id = a.id '
                'JOIN aggregate_metadata m ON m.aggregate_id = a.id '
                "AND m.key = 'availability_zone'")])
        self.assertEqual(36, len(service['uuid']))
        node = self.database.query(
            'SELECT * FROM compute_nodes WHERE deleted = 0')[0]
        self.assertEqual(('compute-a', 'compute-a', service['id']),
                         (node['host'], node['hypervisor_hostname'],
                          node['service_id']))
        self.assertEqual(os.cpu_count(), node['vcpus'])
        self.assertGreater(node['memory_mb'], 0)
        self.assertGreater(node['local_gb'], 0)
        self.assertIn(' up ', json.loads(node['stats'])['uptime'])
        self.assertIn('topology', json.loads(node['cpu_info']))

        first = _report_counts(self.database, host='compute-a')[0]
        self.assertTrue(commands.wait_until(
            lambda: _report_counts(self.database,
                                   host='compute-a')[0] > first))

    def test_says_nothing_of_flavors_it_has_no_servers_for(self):
        agent = self._start('--host', 'compute-a')

        self.assertTrue(commands.wait_until(
            lambda: _heartbeating(self.database, host='compute-a')))
        self.assertNotIn('flavor', agent.log())

    def test_a_host_in_another_zone_stops_the_agent_in_one_line(self):
        agent = self._start('--host', 'compute-a', '--availability-zone',
                            'az1')
        self.assertTrue(commands.wait_until(
            lambda: _heartbeating(self.database, host='compute-a')))
        self.assertEqual(0, agent.stop(signal.SIGINT))

        agent = self._start('--host', 'compute-a', '--availability-zone',
                            'az2')

        self.assertEqual(1, agent.process.wait(30))
        log = agent.log()
        self.assertNotIn('Traceback', log)
        self.assertIn("already in availability zone(s) ['az1']", log)

    def test_restart_reuses_the_service_row(self):
        agent = self._start('--host', 'compute-a')
        self.assertTrue(commands.wait_until(
            lambda: _heartbeating(self.database, host='compute-a')),
            agent.log())
        self.assertEqual(0, agent.stop(signal.SIGINT))
        before = self.database.services(host='compute-a')[0]

        again = self._start('--host', 'compute-a')

        self.assertTrue(commands.wait_until(
            lambda: _report_counts(self.database, host='compute-a')[0] >
            before['report_count']), again.log())
        self.assertEqual([before['id']],
                         [row['id'] for row in self.database.services()])
        self.assertEqual(1, len(self.database.query(
            'SELECT id FROM compute_nodes')))

    def test_sigterm_exits_cleanly(self):
        agent = self._start('--host', 'compute-a')
        self.assertTrue(commands.wait_until(
            lambda: _heartbeating(self.database, minimum=1,
                                  host='compute-a')))

        self.assertEqual(0, agent.stop(signal.SIGTERM))
        self.assertNotIn('Traceback', agent.log())

    def test_other_binary_gets_no_compute_node(self):
        self._start('--host', 'controller-1', '--binary', 'nova-scheduler')

        self.assertTrue(commands.wait_until(
            lambda: _heartbeating(self.database, host='controller-1')))
        service = self.database.services()[0]
        self.assertEqual(('nova-scheduler', 'scheduler'),
                         (service['binary'], service['topic']))
        self.assertEqual([], self.database.query(
            'SELECT id FROM compute_nodes'))


class TestAgentDatabaseTrouble(base.BaseTestCase):

    def test_survives_a_database_outage(self):
        # A short SQLite busy timeout makes a held lock an outage.
        self.database = self.useFixture(
            commands.DatabaseFile(options='timeout=0.1'))
        agent = self.useFixture(commands.AgentProcess(
            self.database, '--host', 'compute-a'))
        self.assertTrue(commands.wait_until(
            lambda: _heartbeating(self.database, minimum=1,
                                  host='compute-a')))

        lock = sqlite3.connect(self.database.path, isolation_level=None)
        self.addCleanup(lock.close)
        lock.execute('BEGIN EXCLUSIVE')
        try:
            self.assertTrue(agent.wait_for_log('the database is '
                                               'unavailable'))
            stalled = self._count_while_locked(lock)
        finally:
            lock.execute('ROLLBACK')

        self.assertTrue(agent.wait_for_log('Recovered'))
        self.assertTrue(commands.wait_until(
            lambda: _report_counts(self.database)[0] > stalled))
        self.assertIsNone(agent.process.poll())

    def _locked_database(self):
        """A database no agent can read until the lock is released."""
        self.database = self.useFixture(
            commands.DatabaseFile(options='timeout=0.1'))
        lock = sqlite3.connect(self.database.path, isolation_level=None)
        self.addCleanup(lock.close)
        lock.execute('BEGIN EXCLUSIVE')
        return lock

    def test_waits_at_start_for_the_database_then_registers(self):
        lock = self._locked_database()
        # A try every second, for ever: by default every 10 s, 10 times,
        # and the test would wait 10 s for the try after the lock.
        with open(self.database.config_file, 'a') as config:
            config.write('max_retries = -1\nretry_interval = 1\n')
        agent = self.useFixture(commands.AgentProcess(
            self.database, '--host', 'compute-a'))
        self.assertTrue(agent.wait_for_log('Cannot start, the database is '
                                           'unavailable'), agent.log())
        # Still waiting a few retries later, one line said.
        self.assertFalse(commands.wait_until(
            lambda: agent.process.poll() is not None, timeout=3))
        lock.execute('ROLLBACK')

        self.assertTrue(agent.wait_for_log('Recovered'), agent.log())
        self.assertTrue(commands.wait_until(
            lambda: _heartbeating(self.database, minimum=1,
                                  host='compute-a')), agent.log())
        log = agent.log()
        self.assertEqual(1, log.count('Cannot start'), log)
        self.assertNotIn('Traceback', log)

    def test_gives_up_after_max_retries_in_one_line(self):
        self._locked_database()
        with open(self.database.config_file, 'a') as config:
            config.write('max_retries = 2\nretry_interval = 1\n')
        agent = self.useFixture(commands.AgentProcess(
            self.database, '--host', 'compute-a'))

        self.assertEqual(1, agent.process.wait(30))
        log = agent.log()
        self.assertIn('up to 2 times', log)
        self.assertIn('after 2 tries ([database] max_retries)', log)
        self.assertNotIn('Traceback', log)
        self.assertEqual(2, len(log.strip().splitlines()), log)

    def test_sigterm_while_waiting_for_the_database_exits_cleanly(self):
        self._locked_database()
        agent = self.useFixture(commands.AgentProcess(
            self.database, '--host', 'compute-a'))
        self.assertTrue(agent.wait_for_log('Cannot start'), agent.log())

        # It waits retry_interval (10 s) between tries, but not for that.
        agent.process.send_signal(signal.SIGTERM)
        self.assertEqual(0, agent.process.wait(5))
        self.assertNotIn('Traceback', agent.log())

    @staticmethod
    def _count_while_locked(lock):
        return lock.execute('SELECT report_count FROM services').fetchone()[0]

    def _unmigrated_database(self, max_retries=10):
        database = self.useFixture(commands.DatabaseFile(migrate=False))
        with open(database.config_file, 'a') as config:
            config.write('max_retries = %d\nretry_interval = 1\n' %
                         max_retries)
        return database

    def test_waits_for_the_schema_then_registers(self):
        database = self._unmigrated_database()
        agent = self.useFixture(commands.AgentProcess(
            database, '--host', 'compute-a'))
        self.assertTrue(agent.wait_for_log('Cannot start yet'), agent.log())
        self.assertIn('run nova-forcedown-manage db sync', agent.log())

        self.assertEqual(0, commands.manage(database, 'db', 'sync').returncode)

        self.assertTrue(agent.wait_for_log('The database schema is current'),
                        agent.log())
        self.assertTrue(commands.wait_until(
            lambda: _heartbeating(database, minimum=1, host='compute-a')),
            agent.log())
        log = agent.log()
        self.assertEqual(1, log.count('Cannot start yet'), log)
        self.assertLess(log.index('The database schema is current'),
                        log.index('Registered 1 nova-compute service'), log)
        self.assertNotIn('Traceback', log)

    def test_unmigrated_database_gives_up_in_one_line(self):
        database = self._unmigrated_database(max_retries=2)
        agent = self.useFixture(commands.AgentProcess(
            database, '--host', 'compute-a'))

        self.assertEqual(1, agent.process.wait(30))
        log = agent.log()
        self.assertNotIn('Traceback', log)
        waited, error = log.strip().splitlines()
        self.assertIn('Cannot start yet', waited)
        self.assertIn('up to 2 times', waited)
        self.assertIn('run nova-forcedown-manage db sync', error)


class TestFakeAgent(base.BaseTestCase):

    def _start(self, hosts):
        database = self.useFixture(commands.DatabaseFile())
        agent = self.useFixture(commands.AgentProcess(
            database, '--driver', 'fake', '--hosts', str(hosts),
            '--host-prefix', 'sim-'))
        self.assertTrue(commands.wait_until(
            lambda: _heartbeating(database, minimum=1, count=hosts)))
        return database, agent

    @staticmethod
    def _ticks_later(database, host, ticks=3):
        """Wait until ``host`` has heartbeaten ``ticks`` more times."""
        start = _report_counts(database, host=host)[0]
        return commands.wait_until(
            lambda: _report_counts(database, host=host)[0] >= start + ticks)

    def test_deleted_service_is_reported_once_and_not_recreated(self):
        database, agent = self._start(hosts=2)

        database.execute(
            "UPDATE services SET deleted = id, deleted_at = "
            "CURRENT_TIMESTAMP WHERE host = 'sim-1'")

        self.assertTrue(agent.wait_for_log(
            'The services table record of nova-compute on sim-1 is gone; '
            'it will not be recreated'))
        self.assertTrue(self._ticks_later(database, 'sim-2'))
        self.assertEqual(1, agent.log().count('is gone'), agent.log())
        self.assertIsNone(agent.process.poll())
        self.assertEqual(['sim-2'], [row['host']
                                     for row in database.services()])

    def test_hosts_forced_down_are_one_line_not_one_per_tick(self):
        database, agent = self._start(hosts=10)

        database.execute("UPDATE services SET forced_down = 1 "
                         "WHERE host <> 'sim-1'")
        self.assertTrue(agent.wait_for_log('9 services are forced down: '
                                           'nova-compute on sim-2, '))
        self.assertTrue(self._ticks_later(database, 'sim-1'))
        database.execute('UPDATE services SET forced_down = 0')
        self.assertTrue(agent.wait_for_log('no longer forced down'))
        self.assertTrue(self._ticks_later(database, 'sim-1'))

        log = agent.log()
        self.assertEqual(1, log.count('services are forced down'), log)
        self.assertEqual(1, log.count('no longer forced down'), log)
        self.assertNotIn('still forced down', log)

    def test_many_hosts_with_instances_heartbeat_from_one_process(self):
        database = self.useFixture(commands.DatabaseFile())
        self.useFixture(commands.AgentProcess(
            database, '--driver', 'fake', '--hosts', '20', '--instances',
            '2', '--host-prefix', 'sim-'))

        self.assertTrue(commands.wait_until(
            lambda: _heartbeating(database, count=20)))
        self.assertEqual(['sim-%d' % i for i in range(1, 21)],
                         [row['host'] for row in database.services()])
        nodes = database.query('SELECT * FROM compute_nodes')
        self.assertEqual(20, len(nodes))
        self.assertEqual({2}, {node['running_vms'] for node in nodes})
        self.assertEqual({'2'}, {json.loads(node['stats'])['num_instances']
                                 for node in nodes})
        self.assertEqual(20, len({node['host_ip'] for node in nodes}))
        instances = database.query('SELECT host, node FROM instances')
        self.assertEqual(40, len(instances))
        self.assertEqual({'sim-%d' % i for i in range(1, 21)},
                         {row['host'] for row in instances})

    def _instances_of_agent(self, database, *args):
        self.agent = self.useFixture(commands.AgentProcess(
            database, '--driver', 'fake', '--hosts', '2', '--instances', '3',
            '--host-prefix', 'sim-', *args))
        self.assertTrue(commands.wait_until(
            lambda: _heartbeating(database, minimum=1, count=2)))
        return database.query('SELECT * FROM instances ORDER BY id')

    def test_a_missing_flavor_is_a_warning_only_when_named(self):
        # No flavor at all: the default m1.medium is missing, quietly.
        database = self.useFixture(commands.DatabaseFile())
        self._instances_of_agent(database)
        self.assertNotIn('WARNING', self.agent.log())

        database = self.useFixture(commands.DatabaseFile())
        instances = self._instances_of_agent(database, '--flavor', 'm9.big')
        warning, = [line for line in self.agent.log().splitlines()
                    if ' WARNING ' in line]
        self.assertIn("No flavor is named m9.big: simulated servers use the "
                      "fake driver's own, fake.small. Create that flavor, or "
                      "name another with --flavor.", warning)
        self.assertEqual('fake.small',
                         json.loads(instances[0]['flavor'])['name'])

    def test_servers_are_active_running_owned_and_keep_a_flavor(self):
        database = self.useFixture(commands.DatabaseFile())
        instances = self._instances_of_agent(
            database, '--project-id', 'p1', '--user-id', 'u1')

        self.assertEqual(6, len(instances))
        self.assertEqual({('active', 1, None, 'p1', 'u1')}, {
            (row['vm_state'], row['power_state'], row['task_state'],
             row['project_id'], row['user_id']) for row in instances})
        self.assertTrue(all(row['launched_at'] for row in instances))
        flavor = json.loads(instances[0]['flavor'])
        self.assertEqual(('fake.small', 2, 4096, 40),
                         (flavor['name'], flavor['vcpus'],
                          flavor['memory_mb'], flavor['root_gb']))
        self.assertIsNone(instances[0]['instance_type_id'])

    def test_servers_copy_the_flavor_named_by_the_option(self):
        database = self.useFixture(commands.DatabaseFile())
        database.execute(
            "INSERT INTO flavors (id, flavorid, name, memory_mb, vcpus, "
            "root_gb, ephemeral_gb, swap, disabled, is_public) VALUES "
            "(7, '7', 'm1.tiny', 512, 1, 1, 0, 0, 0, 1)")
        database.execute(
            "INSERT INTO flavor_extra_specs (flavor_id, key, value) "
            "VALUES (7, 'evacuable', 'true')")

        instances = self._instances_of_agent(database, '--flavor', 'm1.tiny')

        self.assertEqual({7}, {row['instance_type_id'] for row in instances})
        self.assertEqual(
            {'flavorid': '7', 'name': 'm1.tiny', 'memory_mb': 512,
             'vcpus': 1, 'root_gb': 1, 'ephemeral_gb': 0, 'swap': 0,
             'rxtx_factor': None, 'vcpu_weight': None, 'disabled': False,
             'is_public': True, 'description': None,
             'extra_specs': {'evacuable': 'true'}},
            json.loads(instances[0]['flavor']))
        node = database.query('SELECT * FROM compute_nodes')[0]
        self.assertEqual((3, 1536), (node['vcpus_used'],
                                     node['memory_mb_used']))


class TestPowerStateSync(base.BaseTestCase):
    """The database told what the hosts run, as Nova's compute tells it."""

    HOST = 'sync-1'

    def setUp(self):
        super().setUp()
        self.database = self.useFixture(commands.DatabaseFile())
        self.state_dir = self.useFixture(fixtures.TempDir()).path

    def _agent(self, *args):
        agent = self.useFixture(commands.AgentProcess(
            self.database, '--driver', 'fake', '--hosts', '1',
            '--instances', '3', '--host-prefix', 'sync-',
            '--state-dir', self.state_dir, *args))
        self.assertTrue(commands.wait_until(
            lambda: _heartbeating(self.database, minimum=1)), agent.log())
        return agent

    def _servers(self):
        """{name: (vm_state, power_state, task_state)}."""
        return {row['display_name']: (row['vm_state'], row['power_state'],
                                      row['task_state'])
                for row in self.database.query(
                    'SELECT * FROM instances WHERE deleted = 0')}

    def _uuid(self, name):
        return self.database.query(
            'SELECT uuid FROM instances WHERE display_name = ?', name)[0][
                'uuid']

    def _while_the_agent_is_down(self, agent, shut_down, gone):
        """The host, its agent stopped, shuts a server down, loses another."""
        self.assertEqual(0, agent.stop())
        path = os.path.join(self.state_dir, self.HOST + '.json')
        with open(path) as state:
            saved = json.load(state)
        saved['guests'][self._uuid(shut_down)] = 4
        del saved['guests'][self._uuid(gone)]
        with open(path, 'w') as state:
            json.dump(saved, state)

    def test_at_start_the_database_takes_what_the_host_runs(self):
        self._while_the_agent_is_down(
            self._agent(), 'sync-1-server-1', 'sync-1-server-2')

        agent = self._agent()

        expected = {'sync-1-server-1': ('stopped', 4, None),
                    'sync-1-server-2': ('active', 0, None),
                    'sync-1-server-3': ('active', 1, None)}
        self.assertTrue(commands.wait_until(
            lambda: self._servers() == expected), self._servers())
        [stop] = self.database.query(
            "SELECT * FROM instance_actions WHERE action = 'stop'")
        self.assertEqual((self._uuid('sync-1-server-1'), None, None),
                         (stop['instance_uuid'], stop['user_id'],
                          stop['project_id']))
        log = agent.log()
        self.assertIn('1 server(s) stopped by themselves, or run while '
                      'stopped: stopping them', log)
        self.assertIn('1 server(s) not run by their host: power state now '
                      'NOSTATE', log)

    def test_turned_off_the_database_keeps_its_states(self):
        config = os.path.join(self.state_dir, 'sync.conf')
        with open(config, 'w') as off:
            off.write('[DEFAULT]\nsync_power_state_interval = -1\n')
        self._while_the_agent_is_down(
            self._agent(), 'sync-1-server-1', 'sync-1-server-2')

        agent = self._agent('--config-file', config)

        # A sync at start would be done well before three more heartbeats.
        beats = _report_counts(self.database)[0]
        self.assertTrue(commands.wait_until(
            lambda: _heartbeating(self.database, minimum=beats + 3)))
        self.assertEqual({'sync-1-server-%d' % i: ('active', 1, None)
                          for i in (1, 2, 3)}, self._servers())
        self.assertNotIn('server(s)', agent.log())
