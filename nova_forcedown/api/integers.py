"""Integers a client writes in a path, a query string or a body's string.

They are read as ``int()`` reads them, with any number of digits, and
pulled into [-BOUND, BOUND]: a number past every integer column stays past
it, but small enough for every database driver (SQLite's cannot bind more
than 64 bits). Python refuses to convert a string of more than
``sys.get_int_max_str_digits()`` digits (4300 by default) with a
ValueError; such a number is read here like any other, so the answer is
the one a twenty-digit number gets: no row has it (404, an unknown
marker, an empty list) or it is above a maximum. No integer is ever
formatted back to text longer than BOUND's.
"""

import re

from nova_forcedown.objects import base as objects_base

# One past the largest value of the integer columns a request can reach.
BOUND = objects_base.MAX_INTEGER_ID + 1

# What int() reads, written in ASCII digits with leading zeros apart.
_DIGITS = re.compile(r'\s*([-+]?)0*([0-9]+)\s*', re.ASCII)
_BOUND_DIGITS = len(str(BOUND))


def read(text):
    """``text`` as an int in [-BOUND, BOUND]; None if it is not an integer."""
    try:
        value = int(text)
    except ValueError:
        value = _many_digits(text)
        if value is None:
            return None
    return max(-BOUND, min(value, BOUND))


def _many_digits(text):
    """An integer int() refuses for its length, or None.

    Only ASCII digits are read this far; beyond BOUND's number of digits
    the value is not computed at all.
    """
    match = _DIGITS.fullmatch(text)
    if match is None:
        return None
    sign, digits = match.groups()
    if len(digits) > _BOUND_DIGITS:
        return -BOUND if sign == '-' else BOUND
    return int(sign + digits)
