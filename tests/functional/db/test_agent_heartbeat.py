"""An idle agent's database work rides on its heartbeat, on real databases.

A started agent (fake driver, told of its tasks over oslo.messaging's
in-memory ``fake:/`` transport) writes its heartbeats, refreshes its
nodes' resources, looks for the tasks whose cast was lost and compares
its servers' power states with what its hosts run, all from
its heartbeat thread and in the heartbeat's transaction: once it has
started, an idle agent costs the database one connection checkout and
one transaction per heartbeat, however many kinds of work are due.
The intervals are shortened so that each kind comes due within seconds.
"""

import threading
import time

import fixtures
import sqlalchemy as sa

from nova_forcedown.cmd import compute as compute_cmd
from nova_forcedown.compute import agent as compute_agent
from nova_forcedown.compute.drivers import fake as fake_driver
from nova_forcedown import conf as nf_conf
from nova_forcedown.db import engine as db_engine
from nova_forcedown.objects import instance as instance_obj
from nova_forcedown.objects import instance_operations as operations
from nova_forcedown.rpc import transport as rpc_transport
from tests.fixtures import databases

DEADLINE = 60
HEARTBEAT_THREAD = 'heartbeat'
TASKS_THREAD = 'compute-tasks'
# The sync's one worker, as ThreadPoolExecutor names it.
POWER_SYNC_THREAD = 'power-sync_0'


class _Database:
    """What each thread did on the engine: checkouts and statements."""

    def __init__(self, engine):
        self.checkouts = []
        self.statements = []
        self._lock = threading.Lock()
        self._engine = engine
        sa.event.listen(engine, 'checkout', self._checkout)
        sa.event.listen(engine, 'before_cursor_execute', self._statement)

    def stop(self):
        sa.event.remove(self._engine, 'checkout', self._checkout)
        sa.event.remove(self._engine, 'before_cursor_execute',
                        self._statement)

    def _checkout(self, dbapi_connection, record, proxy):
        with self._lock:
            self.checkouts.append(threading.current_thread().name)

    def _statement(self, conn, cursor, statement, *args):
        with self._lock:
            self.statements.append((threading.current_thread().name,
                                    ' '.join(statement.split())))

    def threads(self):
        with self._lock:
            return set(self.checkouts)

    def of(self, thread, starting):
        with self._lock:
            return [text for name, text in self.statements
                    if name == thread and text.startswith(starting)]


class _AgentHeartbeatMixin:

    def setUp(self):
        super().setUp()
        self.conf = nf_conf.make_conf(
            ['--driver', 'fake', '--hosts', '2', '--instances', '1'],
            default_config_files=[], default_config_dirs=[],
            register_cli=compute_cmd.CLI_OPTS)
        self.addCleanup(self.conf.reset)
        rpc_transport.register_opts(self.conf)
        self.conf.set_override('transport_url', 'fake:/')
        self.conf.set_override('report_interval', 1)
        self.conf.set_override('task_reconcile_interval', 2)
        self.useFixture(fixtures.MockPatchObject(
            compute_agent, 'RESOURCE_INTERVAL', 2))
        self.conf.set_override('sync_power_state_interval', 1)
        self.driver = fake_driver.FakeDriver(self.conf)
        self.agent = compute_agent.Agent(self.conf, self.driver)
        self.agent.register()
        self.database = _Database(db_engine.get_engine())
        self.addCleanup(self.database.stop)

    def _start(self):
        self.agent.start()
        self.addCleanup(self.agent.stop)

    def _until(self, condition):
        give_up_at = time.monotonic() + DEADLINE
        while not condition():
            self.assertLess(time.monotonic(), give_up_at)
            time.sleep(0.05)

    def test_an_idle_agent_costs_one_transaction_per_heartbeat(self):
        self._start()
        self._until(lambda: (
            self.database.of(HEARTBEAT_THREAD, 'UPDATE compute_nodes') and
            self.database.of(HEARTBEAT_THREAD, 'SELECT instances.')))
        self.agent.stop()

        # The task runner looked once, as it started; every other
        # checkout is a heartbeat's, and each heartbeat one UPDATE of the
        # services: the resources and the look came in its transaction.
        checkouts = self.database.checkouts
        self.assertEqual(1, checkouts.count(TASKS_THREAD))
        self.assertEqual({HEARTBEAT_THREAD, TASKS_THREAD},
                         self.database.threads())
        self.assertEqual(
            checkouts.count(HEARTBEAT_THREAD),
            len(self.database.of(HEARTBEAT_THREAD,
                                 'UPDATE services SET report_count')))

    def test_a_task_whose_cast_was_lost_is_found_by_a_heartbeat(self):
        self._start()
        self._until(lambda: TASKS_THREAD in self.database.threads())
        uuid = instance_obj.get_by_host(
            self.context, 'fake-compute-2')[0].uuid

        # Recorded as the API records it; RPC is not configured in this
        # process, so no cast leaves: only the heartbeat's look finds it.
        operations.stop(self.context, uuid)

        self._until(lambda: instance_obj.get_record(
            self.context, uuid).task_state is None)
        server = instance_obj.get_record(self.context, uuid)
        self.assertEqual(operations.STOPPED, server.vm_state)

    def test_a_server_its_host_no_longer_runs_is_aligned_after_a_heartbeat(
            self):
        self._start()
        uuid = instance_obj.get_by_host(
            self.context, 'fake-compute-2')[0].uuid

        self.driver.destroy('fake-compute-2', uuid)

        self._until(lambda: instance_obj.get_record(
            self.context, uuid).power_state == 0)
        server = instance_obj.get_record(self.context, uuid)
        self.assertEqual((operations.ACTIVE, None),
                         (server.vm_state, server.task_state))
        # Read in the heartbeat's transaction, written by the sync's own
        # thread: one transaction for the one server that disagreed.
        self.assertEqual(1, self.database.checkouts.count(POWER_SYNC_THREAD))
        self.assertEqual(
            1, len(self.database.of(POWER_SYNC_THREAD, 'UPDATE instances')))


# The agent's threads and the test's each run transactions at once. An
# in-memory SQLite database is one connection that they would all share,
# one thread's commit or rollback ending another's transaction (a stop
# seen half done, once in a loaded run); no deployment has that. The
# agent on a SQLite file is tested as a process (tests/functional/cmd).
databases.backend_test_cases(_AgentHeartbeatMixin, globals(),
                             databases.MIGRATED_FIXTURES[1:])
