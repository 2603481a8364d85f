"""A client's integer as a parameter every driver binds against a column.

:mod:`nova_forcedown.api.integers` pulls a client's number into [-BOUND,
BOUND], BOUND one past the INTEGER columns, so that a number past every
row matches none. psycopg 3 binds each parameter cast to its column's
type, and INTEGER cannot hold BOUND: such a number is bound as a BIGINT,
which PostgreSQL compares with an INTEGER column through its index.
"""

import sqlalchemy as sa

from nova_forcedown.db import models

# What an INTEGER column holds on every supported database.
_INTEGER_RANGE = range(-models.MAX_INTEGER_ID - 1, models.MAX_INTEGER_ID + 1)


def compared(value):
    """``value`` to compare with an integer column: as it is, or a BIGINT."""
    if (isinstance(value, int) and not isinstance(value, bool) and
            value not in _INTEGER_RANGE):
        return sa.literal(value, sa.BigInteger)
    return value
