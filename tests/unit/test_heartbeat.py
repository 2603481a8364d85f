"""The heartbeat loop survives every failure of a tick and keeps going, and
says what it finds once, not on every tick.

Ticks run on a fake clock that the test moves, 10 s a tick, with reminders
every 300 s: a hundred ticks are 1000 s of an agent's life, in no time.
"""

import collections
import logging
import threading

import fixtures
from oslo_db import exception as db_exc
from oslotest import base
import sqlalchemy as sa

from nova_forcedown import exception
from nova_forcedown import periodic
from nova_forcedown.objects import service as service_obj
from nova_forcedown.servicegroup import heartbeat

# Longest a test waits for the loop's thread; it normally takes milliseconds.
DEADLINE = 10

INTERVAL = 10
REMIND_EVERY = 300


def _unavailable(cause):
    """What the engine raises for a lost database: DatabaseUnavailable."""
    error = exception.DatabaseUnavailable(reason=exception.first_line(cause))
    error.__cause__ = cause
    return error


class FakeClock:

    def __init__(self):
        self.now = 0.0

    def __call__(self):
        return self.now


class Records(logging.Handler):
    """Every record logged, for counting lines by level."""

    def __init__(self):
        super().__init__()
        self.records = []

    def emit(self, record):
        self.records.append(record)

    def lines(self):
        return [(record.levelname, record.getMessage())
                for record in self.records]


class Report:
    """A report callable standing in for the database.

    ``forced`` are the hosts stored as forced down (each tick sets
    ``forced_down`` and ``report_count`` on the services, as the DB
    driver's report does), ``gone`` the hosts whose rows are deleted,
    ``others`` the hosts another agent heartbeats as too (once between two
    ticks), and ``error`` an exception every tick raises while it is set,
    after its heartbeats committed (the answer lost on the way back).
    """

    def __init__(self, forced=(), gone=(), error=None, others=()):
        self.forced = set(forced)
        self.gone = set(gone)
        self.error = error
        self.others = set(others)
        self.stored_counts = collections.Counter()
        self.calls = 0

    def __call__(self, services):
        self.calls += 1
        for service in services:
            self.stored_counts[service.host] += (
                2 if service.host in self.others else 1)
        if self.error is not None:
            raise self.error
        for service in services:
            service.forced_down = service.host in self.forced
            service.report_count = self.stored_counts[service.host]
        return [service for service in services if service.host in self.gone]


def _services(*hosts):
    return [service_obj.Service(host=host, binary='nova-compute',
                                forced_down=False) for host in hosts]


class HeartbeatTestCase(base.BaseTestCase):

    def setUp(self):
        super().setUp()
        self.records = Records()
        self.useFixture(fixtures.LogHandler(
            self.records, name='nova_forcedown.servicegroup.heartbeat',
            level=logging.DEBUG))
        self.clock = FakeClock()

    def loop(self, report, hosts=('compute1',)):
        return heartbeat.Heartbeat(report, _services(*hosts), INTERVAL,
                                   REMIND_EVERY, clock=self.clock)

    def ticks(self, loop, count):
        """Run ``count`` ticks, INTERVAL apart; the results of the ticks."""
        results = []
        for _ in range(count):
            results.append(loop.tick())
            self.clock.now += INTERVAL
        return results

    def levels(self):
        return [level for level, _ in self.records.lines()]

    def messages(self):
        return [message for _, message in self.records.lines()]


class TestForcedDown(HeartbeatTestCase):

    def test_logged_once_then_reminded_every_five_minutes(self):
        loop = self.loop(Report(forced={'compute1'}))

        self.assertEqual([True] * 100, self.ticks(loop, 100))

        # 1000 s: the first tick, then 300, 600 and 900 s.
        self.assertEqual(['WARNING'] * 4, self.levels())
        first, *reminders = self.messages()
        self.assertEqual('Service nova-compute on compute1 is forced down: '
                         'it keeps heartbeating but reports down until an '
                         'operator clears forced_down.', first)
        self.assertEqual(['Service nova-compute on compute1 is still forced '
                          'down.'] * 3, reminders)

    def test_cleared_is_one_info_line(self):
        report = Report(forced={'compute1'})
        loop = self.loop(report)
        self.ticks(loop, 3)
        report.forced.clear()

        self.ticks(loop, 100)

        self.assertEqual(['WARNING', 'INFO'], self.levels())
        self.assertEqual('Service nova-compute on compute1 is no longer '
                         'forced down.', self.messages()[1])

    def test_forced_down_again_is_logged_again(self):
        report = Report(forced={'compute1'})
        loop = self.loop(report)
        for forced in ({'compute1'}, set(), {'compute1'}):
            report.forced = forced
            self.ticks(loop, 5)

        self.assertEqual(['WARNING', 'INFO', 'WARNING'], self.levels())

    def test_many_hosts_are_one_line_with_a_count_and_a_few_names(self):
        hosts = ['fake-compute-%d' % i for i in range(1, 1001)]
        report = Report(forced=hosts[1::2])
        loop = self.loop(report, hosts)

        self.ticks(loop, 60)
        report.forced.clear()
        self.ticks(loop, 60)

        # 600 s forced down: the first tick and one reminder, then cleared.
        self.assertEqual(['WARNING', 'WARNING', 'INFO'], self.levels())
        started, reminder, cleared = self.messages()
        names = ('nova-compute on fake-compute-2, nova-compute on '
                 'fake-compute-4, nova-compute on fake-compute-6, '
                 'nova-compute on fake-compute-8, nova-compute on '
                 'fake-compute-10 and 495 more')
        self.assertEqual('500 services are forced down: %s. They keep '
                         'heartbeating but report down until an operator '
                         'clears forced_down.' % names, started)
        self.assertEqual('500 services are still forced down: %s.' % names,
                         reminder)
        self.assertEqual('500 services are no longer forced down: %s.'
                         % names, cleared)

    def test_reminder_names_every_host_still_forced_down(self):
        report = Report(forced={'compute1'})
        loop = self.loop(report, ('compute1', 'compute2'))
        self.ticks(loop, 10)
        report.forced.add('compute2')

        self.ticks(loop, 21)

        # compute2 joining at 100 s does not delay the reminder of 300 s.
        self.assertEqual([
            'Service nova-compute on compute1 is forced down: it keeps '
            'heartbeating but reports down until an operator clears '
            'forced_down.',
            'Service nova-compute on compute2 is forced down: it keeps '
            'heartbeating but reports down until an operator clears '
            'forced_down.',
            '2 services are still forced down: nova-compute on compute1, '
            'nova-compute on compute2.'], self.messages())

    def test_a_service_whose_row_is_gone_is_not_said_forced_down(self):
        loop = self.loop(Report(forced={'compute1'}, gone={'compute1'}))
        loop.tick()
        self.assertEqual(['ERROR'], self.levels())
        self.assertNotIn('forced down', self.messages()[0])

    def test_a_forced_down_service_deleted_is_not_said_no_longer_forced(self):
        report = Report(forced={'compute1'})
        loop = self.loop(report)
        loop.tick()
        report.gone = {'compute1'}
        loop.tick()

        self.assertEqual(['WARNING', 'ERROR'], self.levels())
        self.assertIn('is gone', self.messages()[1])
        self.assertNotIn('no longer forced down', ' '.join(self.messages()))


class TestRowsGone(HeartbeatTestCase):

    def test_logged_once_then_reminded_and_the_next_ticks_run(self):
        report = Report(gone={'compute2'})
        loop = self.loop(report, ('compute1', 'compute2'))

        self.assertEqual([False] * 100, self.ticks(loop, 100))

        self.assertEqual(100, report.calls)
        self.assertEqual(['ERROR'] * 4, self.levels())
        self.assertEqual('The services table record of nova-compute on '
                         'compute2 is gone; it will not be recreated. '
                         'Restart the agent to register the service again.',
                         self.messages()[0])
        self.assertNotIn('compute1', ''.join(self.messages()))

    def test_a_row_that_comes_back_is_one_info_line(self):
        report = Report(gone={'compute1'})
        loop = self.loop(report)
        self.ticks(loop, 3)
        report.gone.clear()

        self.assertEqual([True] * 3, self.ticks(loop, 3))

        self.assertEqual(['ERROR', 'INFO'], self.levels())
        self.assertIn('is back', self.messages()[1])


class TestAnotherAgentAsTheSameHost(HeartbeatTestCase):

    def test_one_error_then_reminders_while_it_lasts(self):
        loop = self.loop(Report(others={'compute2'}),
                         ('compute1', 'compute2'))

        self.assertEqual([True] * 100, self.ticks(loop, 100))

        # Seen at the second tick (the first counts), reminded at 310,
        # 610 and 910 s.
        self.assertEqual(['ERROR'] * 4, self.levels())
        first, *reminders = self.messages()
        self.assertEqual(
            'Another agent heartbeats as nova-compute on compute2 too: its '
            'report count rose by more than the heartbeats of this agent. '
            'While both run, the host looks up when either does, so its '
            'failure goes unseen. Run one agent per host name: stop the '
            'other, or give it a [DEFAULT] host of its own.', first)
        self.assertEqual(['Another agent still heartbeats as nova-compute '
                          'on compute2; run one agent per host name.'] * 3,
                         reminders)

    def test_ends_once_no_other_heartbeat_is_seen_for_a_while(self):
        report = Report(others={'compute1'})
        loop = self.loop(report)
        self.ticks(loop, 10)
        report.others.clear()

        # Last seen at 90 s: still named (and reminded of at 310 s) until
        # 390 s.
        self.ticks(loop, 29)
        self.assertEqual(['ERROR', 'ERROR'], self.levels())
        self.ticks(loop, 1)

        self.assertEqual(['ERROR', 'ERROR', 'INFO'], self.levels())
        self.assertEqual('No other agent has heartbeated as nova-compute on '
                         'compute1 for 300 s.', self.messages()[-1])

    def test_an_uneven_interleaving_does_not_make_it_come_and_go(self):
        report = Report()
        loop = self.loop(report)
        for others in ({'compute1'}, set(), set(), {'compute1'}) * 7:
            report.others = others
            self.ticks(loop, 1)

        self.assertEqual(['ERROR'], self.levels())

    def test_a_heartbeat_whose_answer_was_lost_is_not_another_agent(self):
        report = Report()
        loop = self.loop(report)
        self.ticks(loop, 3)
        report.error = RuntimeError('connection reset after commit')
        self.ticks(loop, 2)
        report.error = None

        self.assertEqual([True] * 5, self.ticks(loop, 5))

        self.assertNotIn('Another agent', ' '.join(self.messages()))

    def test_a_service_whose_row_is_gone_is_forgotten(self):
        report = Report(others={'compute1'})
        loop = self.loop(report)
        self.ticks(loop, 3)
        report.gone = {'compute1'}

        self.ticks(loop, 10)

        self.assertEqual(['ERROR', 'ERROR'], self.levels())
        self.assertIn('is gone', self.messages()[1])
        self.assertNotIn('No other agent', ' '.join(self.messages()))


class TestFailedTicks(HeartbeatTestCase):

    def test_database_outage_is_one_warning_reminders_and_recovery(self):
        report = Report(error=_unavailable(db_exc.DBConnectionError(
            'Lost connection to MySQL server')))
        loop = self.loop(report)

        self.assertEqual([False] * 100, self.ticks(loop, 100))
        report.error = None
        self.assertEqual([True] * 10, self.ticks(loop, 10))

        self.assertEqual(['WARNING'] * 4 + ['INFO'], self.levels())
        self.assertEqual('Heartbeats failed, the database is unavailable '
                         '(Lost connection to MySQL server); retrying every '
                         '10 s.', self.messages()[0])
        self.assertEqual('Heartbeats still fail after 300 s, the database '
                         'is unavailable (Lost connection to MySQL server); '
                         'retrying every 10 s.', self.messages()[1])
        self.assertEqual('Recovered: heartbeats are reaching the database '
                         'again, after 1000 s.', self.messages()[-1])

    def test_a_pool_timeout_is_an_outage_as_in_the_api(self):
        report = Report(error=_unavailable(sa.exc.TimeoutError(
            'QueuePool limit of size 5 overflow 10 reached')))
        loop = self.loop(report)

        self.assertEqual([False] * 3, self.ticks(loop, 3))

        self.assertEqual(['WARNING'], self.levels())
        self.assertIn('the database is unavailable (QueuePool limit',
                      self.messages()[0])
        self.assertNotIn('Traceback', '\n'.join(self.messages()))

    def test_unexpected_error_has_one_traceback(self):
        report = Report(error=RuntimeError('disk full'))
        loop = self.loop(report)

        self.assertEqual([False] * 40, self.ticks(loop, 40))
        report.error = None
        self.ticks(loop, 1)

        self.assertEqual(['ERROR', 'ERROR', 'INFO'], self.levels())
        started, reminder, recovered = self.records.records
        self.assertEqual('Unexpected error in the heartbeats of 1 '
                         'service(s), nova-compute on compute1 among them '
                         '(disk full); retrying every 10 s.',
                         started.getMessage())
        self.assertIs(RuntimeError, started.exc_info[0])
        self.assertIn('disk full', reminder.getMessage())
        self.assertFalse(reminder.exc_info)
        self.assertIn('Recovered', recovered.getMessage())

    def test_successful_ticks_log_nothing(self):
        loop = self.loop(Report())
        self.assertEqual([True] * 100, self.ticks(loop, 100))
        self.assertEqual([], self.records.records)


class ScriptedReport:
    """Scripted outcomes, then plain successes; ``done`` after ``wanted``.

    An outcome is an exception to raise or the hosts whose rows are gone.
    """

    def __init__(self, *outcomes, wanted_calls=1):
        self._outcomes = list(outcomes)
        self._wanted_calls = wanted_calls
        self.calls = 0
        self.done = threading.Event()

    def __call__(self, services):
        self.calls += 1
        if self.calls >= self._wanted_calls:
            self.done.set()
        outcome = self._outcomes.pop(0) if self._outcomes else []
        if isinstance(outcome, Exception):
            raise outcome
        for service in services:
            service.report_count = self.calls
        return [service for service in services if service.host in outcome]


class TestThread(HeartbeatTestCase):

    def _start(self, report):
        return heartbeat.Heartbeat(report, _services('compute1'), 0.01,
                                   REMIND_EVERY).start()

    def test_loop_keeps_running_through_every_kind_of_failure(self):
        report = ScriptedReport(
            RuntimeError('boom'), ['compute1'],
            db_exc.DBConnectionError('connection refused'), wanted_calls=5)
        loop = self._start(report)
        self.addCleanup(loop.stop, DEADLINE)

        self.assertTrue(report.done.wait(DEADLINE))

        log = '\n'.join(self.messages())
        self.assertIn('boom', log)
        self.assertIn('is gone', log)
        self.assertIn('connection refused', log)
        self.assertIn('Recovered', log)

    def test_stop_ends_the_thread(self):
        report = ScriptedReport()
        loop = self._start(report)
        self.assertTrue(report.done.wait(DEADLINE))
        loop.stop(DEADLINE)
        calls = report.calls
        loop.wait(DEADLINE)
        self.assertEqual(calls, report.calls)

    def test_a_ticker_started_late_and_stopped_first_never_ticks(self):
        report = ScriptedReport()
        loop = periodic.Every(lambda: report([]), 60, 'late',
                              run_immediately=False).start()
        loop.stop(DEADLINE)
        loop.wait(DEADLINE)
        self.assertEqual(0, report.calls)

    def test_stop_returns_while_a_tick_hangs(self):
        entered, release = threading.Event(), threading.Event()
        self.addCleanup(release.set)

        def hang():
            entered.set()
            release.wait()

        loop = periodic.Every(hang, 60, 'hanging').start()
        self.assertTrue(entered.wait(DEADLINE))
        stopping = threading.Thread(target=loop.stop, args=(0.1,))
        stopping.start()
        stopping.join(DEADLINE)

        self.assertFalse(stopping.is_alive())
        self.assertFalse(release.is_set())
