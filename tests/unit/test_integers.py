"""Integers a client writes: int()'s reading, any number of digits."""

import sys

import hypothesis
from hypothesis import strategies as st
from oslotest import base

from nova_forcedown.api import integers

BOUND = integers.BOUND
LIMIT = sys.get_int_max_str_digits()


def _clamped(value):
    return max(-BOUND, min(value, BOUND))


class TestRead(base.BaseTestCase):

    @hypothesis.settings(max_examples=200, deadline=None, derandomize=True,
                         database=None)
    @hypothesis.given(value=st.integers(-10 ** 30, 10 ** 30),
                      zeros=st.integers(0, 3), spaces=st.sampled_from(
                          ['', ' ', '\t', '\n ']))
    def test_what_int_reads_is_read_the_same(self, value, zeros, spaces):
        sign = '-' if value < 0 else '+' if zeros % 2 else ''
        text = '%s%s%s%d%s' % (spaces, sign, '0' * zeros, abs(value),
                               spaces)
        self.assertEqual(_clamped(int(text)), integers.read(text), text)

    def test_past_int_s_limit_the_number_is_beyond_the_bound(self):
        for text, expected in (('9' * (LIMIT + 1), BOUND),
                               ('1' + '0' * LIMIT, BOUND),
                               (' -' + '7' * 100000 + '\n', -BOUND),
                               ('+' + '9' * (LIMIT * 2), BOUND)):
            self.assertRaises(ValueError, int, text)
            self.assertEqual(expected, integers.read(text), text[:20])

    def test_leading_zeros_do_not_count(self):
        self.assertEqual(42, integers.read('0' * (LIMIT * 2) + '42'))
        self.assertEqual(-42, integers.read('-' + '0' * LIMIT + '42'))
        self.assertEqual(0, integers.read('0' * (LIMIT + 1)))

    def test_what_is_no_integer_is_none(self):
        for text in ('', ' ', '-', '+', '1.5', '1e5', '0x10', 'abc',
                     '1 2', '--1', '9' * (LIMIT + 1) + 'x',
                     '1_' + '0' * LIMIT, '\u0661' * (LIMIT + 1)):
            self.assertIsNone(integers.read(text), text[:20])

    def test_within_the_bound_the_value_is_exact(self):
        for value in (0, 1, BOUND - 1, BOUND, -BOUND):
            self.assertEqual(value, integers.read(str(value)))
        self.assertEqual(BOUND, integers.read(str(BOUND + 1)))
        self.assertEqual(-BOUND, integers.read(str(-BOUND - 1)))
