"""A lasting condition is logged when it starts and ends, reminded between."""

import logging

from oslotest import base

from nova_forcedown import condition_log
from tests.unit import test_heartbeat

MESSAGES = condition_log.Messages(
    level=logging.WARNING,
    started=('%(names)s broke.', '%(count)d broke: %(names)s.'),
    reminder='Still broken: %(names)s, for %(seconds)d s.',
    ended=('%(names)s mended after %(seconds)d s.',
           '%(count)d mended: %(names)s.'))


class TestConditionLog(base.BaseTestCase):

    def setUp(self):
        super().setUp()
        self.clock = test_heartbeat.FakeClock()
        self.records = test_heartbeat.Records()
        logger = logging.getLogger('test_condition_log')
        logger.addHandler(self.records)
        self.addCleanup(logger.removeHandler, self.records)
        # Whatever level an earlier test in this process left behind.
        self.addCleanup(logger.setLevel, logger.level)
        logger.setLevel(logging.INFO)
        self.condition = condition_log.ConditionLog(
            logger, MESSAGES, remind_every=60, clock=self.clock)

    def update_at(self, now, names):
        self.clock.now = now
        self.condition.update(names)

    def test_nothing_to_say_says_nothing(self):
        for now in range(0, 1000, 10):
            self.update_at(now, [])
        self.assertEqual([], self.records.lines())

    def test_only_the_names_that_left_are_said_mended(self):
        self.update_at(0, ['a', 'b'])
        self.update_at(10, ['a'])
        self.update_at(60, ['a'])
        self.update_at(70, [])

        self.assertEqual([('WARNING', '2 broke: a, b.'),
                          ('INFO', 'b mended after 10 s.'),
                          ('WARNING', 'Still broken: a, for 60 s.'),
                          ('INFO', 'a mended after 70 s.')],
                         self.records.lines())

    def test_a_new_condition_counts_from_its_own_start(self):
        self.update_at(0, ['a'])
        self.update_at(10, [])
        self.update_at(100, ['a'])
        self.update_at(159, ['a'])
        self.update_at(160, ['a'])

        self.assertEqual(['a broke.', 'a mended after 10 s.', 'a broke.',
                          'Still broken: a, for 60 s.'],
                         [message for _, message in self.records.lines()])

    def test_describe_names_five_and_counts_the_rest(self):
        self.assertEqual('a', condition_log.describe(['a']))
        self.assertEqual('a, b, c, d, e',
                         condition_log.describe(list('abcde')))
        self.assertEqual('a, b, c, d, e and 2 more',
                         condition_log.describe(list('abcdefg')))
