"""The monitor's check that each watched host could be fenced."""

import logging as std_logging
import types

import fixtures
from oslotest import base
from stevedore import exception as stevedore_exc

from nova_forcedown import conf as nf_conf
from nova_forcedown.monitor.drivers import base as drivers
from nova_forcedown.monitor import readiness
from tests.unit import test_heartbeat

ON = drivers.BmcStatus(drivers.ON, drivers.OK, ())


class Bmcs:
    """What each host's fence driver answers: the driver boundary."""

    def __init__(self):
        self.answers = {}
        self.read = []

    def load(self, settings, timeout):
        answer = self.answers.get(settings.host, ON)
        if answer is stevedore_exc.NoMatches:
            raise stevedore_exc.NoMatches(settings.fence_driver)
        return types.SimpleNamespace(status=lambda: self._read(
            settings.host, answer))

    def _read(self, host, answer):
        self.read.append(host)
        if isinstance(answer, Exception):
            raise answer
        return answer


class TestFenceReadiness(base.BaseTestCase):

    def setUp(self):
        super().setUp()
        self.log = self.useFixture(fixtures.FakeLogger(
            name=readiness.__name__, level=std_logging.INFO,
            format='%(levelname)s %(message)s'))
        self.conf = nf_conf.make_conf([])
        self.conf.set_override('bmc_check_interval', 60, group='monitor')
        self.bmcs = Bmcs()
        self.clock = test_heartbeat.FakeClock()
        self.leadership = types.SimpleNamespace(leading=True)
        # What the monitor's last look watched: None before its first.
        self.watched = None
        self.readiness = readiness.FenceReadiness(
            self.conf, self.leadership, lambda: self.watched, self.clock,
            self.bmcs.load, sleep=lambda seconds: None)

    def lines(self):
        return self.log.output.splitlines()

    def test_a_host_whose_bmc_refuses_is_named_once(self):
        self.bmcs.answers['c2'] = drivers.FenceError('bad password')
        self.readiness.check(['c1', 'c2'])
        self.readiness.check(['c1', 'c2'])

        self.assertEqual([
            'ERROR Host c2 cannot be fenced: its BMC cannot be read (bad '
            'password). Were it to fail, the monitor would neither force it '
            'down nor evacuate its servers; fix its [monitor_host:c2] '
            'section (or the [monitor] defaults).',
            'INFO Fence drivers checked: 1 of 2 watched compute hosts can '
            'be fenced; checked again every 60 s.'], self.lines())

    def test_another_reason_is_said_and_the_end_once(self):
        self.bmcs.answers['c1'] = drivers.FenceError('timed out')
        self.readiness.check(['c1'])
        self.bmcs.answers['c1'] = stevedore_exc.NoMatches
        self.readiness.check(['c1'])
        self.clock.now = 30
        del self.bmcs.answers['c1']
        self.readiness.check(['c1'])
        self.readiness.check(['c1'])

        lines = self.lines()
        self.assertEqual(4, len(lines), lines)
        self.assertIn('its BMC cannot be read (timed out)', lines[0])
        self.assertIn("its fence_driver 'ipmi' does not exist", lines[2])
        self.assertEqual('INFO Host c1 can be fenced again: its fence '
                         'driver reads its power, after 30 s.', lines[3])

    def test_a_host_no_longer_watched_leaves_without_a_word(self):
        self.bmcs.answers['c1'] = drivers.FenceError('timed out')
        self.readiness.check(['c1'])
        self.readiness.check([])
        self.readiness.check(['c1'])

        lines = self.lines()
        self.assertEqual(3, len(lines), lines)
        self.assertNotIn('can be fenced again', self.log.output)
        self.assertIn('Host c1 cannot be fenced', lines[2])

    def test_a_standby_reads_no_bmc(self):
        self.leadership.leading = False
        self.readiness.tick()
        self.assertEqual([], self.bmcs.read)

    def _tick_at(self, now):
        """The hosts whose BMC the tick at ``now`` read."""
        self.clock.now = now
        read = len(self.bmcs.read)
        self.readiness.tick()
        return self.bmcs.read[read:]

    def test_checks_come_every_interval_and_at_once_when_leading(self):
        self.watched = frozenset(['c1'])
        checked_at = [now for now in (0, 1, 59, 60, 61, 120)
                      for _ in self._tick_at(now)]
        self.leadership.leading = False
        self.readiness.tick()
        self.leadership.leading = True
        checked_at += [121] * len(self._tick_at(121))

        self.assertEqual([0, 60, 120, 121], checked_at)
        self.assertEqual({'c1'}, set(self.bmcs.read))

    def test_nothing_is_checked_before_the_monitor_looked(self):
        self.assertEqual([], self._tick_at(0))
        self.watched = frozenset(['c1', 'c2'])
        self.assertEqual(['c1', 'c2'], self._tick_at(1))
        self.assertIn('Fence drivers checked: 2 of 2', self.log.output)

    def test_a_newly_watched_host_is_checked_when_first_seen(self):
        self.watched = frozenset(['c1'])
        self._tick_at(0)
        self.bmcs.answers['c2'] = drivers.FenceError('bad password')
        self.watched = frozenset(['c1', 'c2', 'c3'])

        self.assertEqual(['c2', 'c3'], self._tick_at(1))
        self.assertEqual([], self._tick_at(2))
        self.assertEqual(['c1', 'c2', 'c3'], self._tick_at(60))
        lines = self.lines()
        self.assertEqual(3, len(lines), lines)
        self.assertIn('Host c2 cannot be fenced: its BMC cannot be read '
                      '(bad password)', lines[1])
        self.assertEqual('INFO Fence drivers checked for 2 newly watched '
                         'compute host(s) (c2, c3): 1 can be fenced.',
                         lines[2])

    def test_a_host_watched_again_is_checked_again(self):
        # c1 cannot be fenced, is forced down (no longer watched), its
        # BMC is mended and the host forced up: said as it comes back.
        self.bmcs.answers['c1'] = drivers.FenceError('timed out')
        self.watched = frozenset(['c1'])
        self._tick_at(0)
        self.watched = frozenset()
        self._tick_at(1)
        del self.bmcs.answers['c1']
        self.watched = frozenset(['c1'])

        self.assertEqual(['c1'], self._tick_at(2))
        self.assertIn('INFO Host c1 can be fenced again', self.log.output)
