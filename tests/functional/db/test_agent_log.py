"""What the agent logs about rows changed behind its back, on real databases.

An operator forces hosts down, or deletes services and compute nodes, while
the agent heartbeats them and refreshes their resources. Each change is one
line when it happens and a reminder every log_reminder_interval, never a
line per host per tick. Ticks run on a fake clock, called by the test.
"""

import functools
import logging

import fixtures
import sqlalchemy as sa

from nova_forcedown.cmd import compute as compute_cmd
from nova_forcedown.compute import agent as compute_agent
from nova_forcedown.compute.drivers import fake as fake_driver
from nova_forcedown import conf as nf_conf
from nova_forcedown.db import models
from nova_forcedown.servicegroup.drivers import db as db_driver
from nova_forcedown.servicegroup import heartbeat
from tests.fixtures import databases
from tests.unit import test_heartbeat

HOSTS = 20
REMIND_EVERY = 300


class ChangingDriver(fake_driver.FakeDriver):
    """The fake driver, whose nodes have something to write each refresh.

    Its uptime would, once a minute; here the workload follows the clock.
    """

    def __init__(self, conf, clock):
        super().__init__(conf)
        self._clock = clock

    def node_resources(self, host):
        return dict(super().node_resources(host),
                    current_workload=int(self._clock.now))


class _AgentLogMixin:

    def setUp(self):
        super().setUp()
        self.conf = nf_conf.make_conf(
            ['--driver', 'fake', '--hosts', str(HOSTS)],
            default_config_files=[], default_config_dirs=[],
            register_cli=compute_cmd.CLI_OPTS)
        self.addCleanup(self.conf.reset)
        self.clock = test_heartbeat.FakeClock()
        self.agent = compute_agent.Agent(
            self.conf, ChangingDriver(self.conf, self.clock), clock=self.clock)
        self.agent.register()
        self.records = test_heartbeat.Records()
        for module in (heartbeat, compute_agent):
            self.useFixture(fixtures.LogHandler(
                self.records, name=module.__name__, level=logging.DEBUG))

    def _update_rows(self, model, hosts, **values):
        with self.engine.begin() as connection:
            connection.execute(sa.update(model).where(
                model.host.in_(hosts)).values(**values))

    def _hosts(self, *indexes):
        return ['fake-compute-%d' % i for i in indexes]

    def test_hosts_forced_down_are_one_line_then_reminders(self):
        loop = heartbeat.Heartbeat(
            db_driver.DbDriver.report_states, self.agent.services, 10,
            REMIND_EVERY, clock=self.clock)
        forced = self._hosts(*range(1, HOSTS + 1, 2))
        self._update_rows(models.Service, forced, forced_down=True)

        for _ in range(100):
            self.assertTrue(loop.tick())
            self.clock.now += 10
        self._update_rows(models.Service, forced, forced_down=False)
        loop.tick()

        # 1000 s: the first tick, reminders at 300, 600 and 900 s, cleared.
        self.assertEqual(['WARNING'] * 4 + ['INFO'], self.records_levels())
        self.assertTrue(self.records.lines()[0][1].startswith(
            '10 services are forced down: nova-compute on fake-compute-1, '
            'nova-compute on fake-compute-3, '))
        self.assertEqual(101 * HOSTS,
                         sum(row.report_count for row in self._services()))

    def test_nodes_gone_are_one_line_then_reminders(self):
        gone = self._hosts(2, 4)
        self._update_rows(models.ComputeNode, gone,
                          deleted=models.ComputeNode.id)

        loop = heartbeat.Heartbeat(
            functools.partial(db_driver.DbDriver.report_states,
                              along=self.agent.with_heartbeat),
            self.agent.services, 10, REMIND_EVERY, clock=self.clock)
        for _ in range(120):
            self.clock.now += 10
            loop.tick()

        # 1200 s of heartbeats, a refresh every 60 s: the first one, then
        # reminders at 300, 600 and 900 s.
        self.assertEqual(['ERROR'] * 4, self.records_levels())
        self.assertEqual(
            '2 compute nodes are gone: fake-compute-2, fake-compute-4. They '
            'will not be recreated. Restart the agent to register them '
            'again.', self.records.lines()[0][1])
        self.assertEqual(
            '2 compute nodes are still gone: fake-compute-2, fake-compute-4. '
            'Restart the agent to register them again.',
            self.records.lines()[1][1])

    def records_levels(self):
        return [level for level, _ in self.records.lines()]

    def _services(self):
        with self.engine.connect() as connection:
            return connection.execute(sa.select(models.Service)).all()


databases.backend_test_cases(_AgentLogMixin, globals())
