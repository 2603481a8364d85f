"""The heartbeat loop survives every failure of a tick and keeps going."""

import threading

import fixtures
from oslo_db import exception as db_exc
from oslotest import base

from nova_forcedown.objects import service as service_obj
from nova_forcedown.servicegroup import heartbeat

# Longest a test waits for the loop's thread; it normally takes milliseconds.
DEADLINE = 10


class ScriptedReport:
    """A report callable with scripted outcomes, then plain successes.

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
        return [service for service in services if service.host in outcome]


def _service(host='compute1'):
    return service_obj.Service(host=host, binary='nova-compute')


class HeartbeatTestCase(base.BaseTestCase):

    def setUp(self):
        super().setUp()
        self.log = self.useFixture(fixtures.FakeLogger(
            name='nova_forcedown.servicegroup.heartbeat'))


class TestTick(HeartbeatTestCase):

    def _two_ticks(self, error):
        report = ScriptedReport(error)
        loop = heartbeat.Heartbeat(report, [_service()], interval=60)
        return loop.tick(), loop.tick(), report

    def test_unexpected_error_is_logged_and_the_next_tick_runs(self):
        first, second, report = self._two_ticks(RuntimeError('disk full'))
        self.assertEqual((False, True, 2), (first, second, report.calls))
        self.assertIn('Unexpected error in the heartbeats of 1 service(s), '
                      'compute1/nova-compute among them', self.log.output)
        self.assertIn('disk full', self.log.output)

    def test_missing_service_row_is_logged_and_the_next_tick_runs(self):
        first, second, report = self._two_ticks(['compute1'])
        self.assertEqual((False, True, 2), (first, second, report.calls))
        self.assertIn('record for host compute1 binary nova-compute is '
                      'gone', self.log.output)

    def test_database_outage_is_logged_and_recovery_too(self):
        first, second, report = self._two_ticks(
            db_exc.DBConnectionError('Lost connection to MySQL server'))
        self.assertEqual((False, True, 2), (first, second, report.calls))
        self.assertIn('the database is unavailable', self.log.output)
        self.assertIn('Lost connection to MySQL server', self.log.output)
        self.assertIn('Recovered', self.log.output)

    def test_only_the_services_whose_rows_are_gone_are_named(self):
        loop = heartbeat.Heartbeat(ScriptedReport(['compute2']),
                                   [_service('compute1'),
                                    _service('compute2')], 60)
        self.assertFalse(loop.tick())
        self.assertIn('host compute2 binary nova-compute is gone',
                      self.log.output)
        self.assertNotIn('compute1', self.log.output)

    def test_successful_ticks_log_nothing(self):
        loop = heartbeat.Heartbeat(ScriptedReport(), [_service()], 60)
        self.assertTrue(loop.tick())
        self.assertTrue(loop.tick())
        self.assertEqual('', self.log.output)


class TestThread(HeartbeatTestCase):

    def test_loop_keeps_running_through_every_kind_of_failure(self):
        report = ScriptedReport(
            RuntimeError('boom'), ['compute1'],
            db_exc.DBConnectionError('connection refused'), wanted_calls=5)
        loop = heartbeat.Heartbeat(report, [_service()],
                                   interval=0.01).start()
        self.addCleanup(loop.stop, DEADLINE)

        self.assertTrue(report.done.wait(DEADLINE))

        self.assertIn('boom', self.log.output)
        self.assertIn('is gone', self.log.output)
        self.assertIn('connection refused', self.log.output)
        self.assertIn('Recovered', self.log.output)

    def test_stop_ends_the_thread(self):
        report = ScriptedReport()
        loop = heartbeat.Heartbeat(report, [_service()],
                                   interval=0.01).start()
        self.assertTrue(report.done.wait(DEADLINE))
        loop.stop(DEADLINE)
        calls = report.calls
        loop.wait(DEADLINE)
        self.assertEqual(calls, report.calls)

    def test_stopped_during_the_initial_delay_never_reports(self):
        report = ScriptedReport()
        loop = heartbeat.Heartbeat(report, [_service()], interval=0.01,
                                   initial_delay=60).start()
        loop.stop(DEADLINE)
        self.assertEqual(0, report.calls)
