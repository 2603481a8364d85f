"""A column in a list of values: bound at each run, or fixed in the statement.

``column IN (...)`` with an expanding parameter becomes, at each run, one
bound parameter per value. psycopg 3 binds them on the server, each cast
to the column's type, and parses the query for each of them: for the 934
hosts of a page of 1,000 servers that took milliseconds a statement.
PostgreSQL's own ``column = ANY(array)``, the form it turns an IN list
into anyway, takes the list as one array parameter with either driver;
the other databases keep the IN list.
"""

import sqlalchemy as sa
from sqlalchemy.dialects import postgresql
from sqlalchemy.ext import compiler as sa_compiler
from sqlalchemy.sql import expression
from sqlalchemy.sql import visitors


class _InValues(expression.ColumnElement):
    """``column`` is one of the values bound to ``name`` (a list)."""

    inherit_cache = True
    type = sa.Boolean()
    # A condition as it is, never compared with 1 where booleans are ints.
    _is_implicitly_boolean = True
    _traverse_internals = [
        ('column', visitors.InternalTraversal.dp_clauseelement),
        ('name', visitors.InternalTraversal.dp_string)]

    def __init__(self, column, name):
        self.column = column
        self.name = name


@sa_compiler.compiles(_InValues)
def _in_list(element, compiler, **kwargs):
    return compiler.process(element.column.in_(
        sa.bindparam(element.name, expanding=True)), **kwargs)


@sa_compiler.compiles(_InValues, 'postgresql')
def _any_of_array(element, compiler, **kwargs):
    values = sa.bindparam(element.name,
                          type_=postgresql.ARRAY(element.column.type))
    return compiler.process(element.column == sa.any_(values), **kwargs)


def in_values(column, name):
    """``column`` in the list bound to ``name`` at each run."""
    return _InValues(column, name)


def one_of(column, values):
    """``column`` is one of the fixed ``values``, without an IN list.

    SQLAlchemy binds an IN list of fixed values as an expanding parameter
    too, and expands it again at every run (about 14 microseconds a
    statement on SQLite); equalities are bound once, when the statement is
    built.
    """
    return sa.or_(*(column == value for value in values))


def none_of(column, values):
    """``column`` is none of the fixed ``values`` (NULL is not), as NOT IN."""
    return sa.and_(*(column != value for value in values))
