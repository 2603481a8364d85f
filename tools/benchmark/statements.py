"""The SQL statements a request runs: the project's one counter of them.

The benchmark's API server wraps the application in
``CountingMiddleware``, so that every response says in
``X-Nova-Forcedown-SQL-Statements`` how many statements its request ran;
the tests record statements with ``listen`` (tests/fixtures.py). The
product itself never counts. Transaction control (BEGIN, COMMIT...) is
not counted: oslo.db sends its own BEGIN on SQLite, and a count must be
the same on every backend.
"""

import functools
import threading

import sqlalchemy as sa

HEADER = 'X-Nova-Forcedown-SQL-Statements'

_TRANSACTION_CONTROL = ('BEGIN', 'COMMIT', 'ROLLBACK', 'SAVEPOINT',
                        'RELEASE')


def listen(engine, record):
    """Call ``record(statement)`` for each statement run on ``engine``.

    Returns the function that stops listening.
    """
    def listener(conn, cursor, statement, parameters, context, executemany):
        if not statement.lstrip().upper().startswith(_TRANSACTION_CONTROL):
            record(statement)

    sa.event.listen(engine, 'before_cursor_execute', listener)
    return functools.partial(sa.event.remove, engine,
                             'before_cursor_execute', listener)


class CountingMiddleware:
    """WSGI middleware: each response counts its request's statements.

    Each server thread serves one request at a time, so a per-thread count
    is the request's.
    """

    def __init__(self, application, engine):
        self.application = application
        self._local = threading.local()
        listen(engine, self._count)

    def _count(self, statement):
        # A thread that serves no request may run statements too.
        self._local.count = getattr(self._local, 'count', 0) + 1

    def __call__(self, environ, start_response):
        self._local.count = 0

        def counting_start_response(status, headers, exc_info=None):
            headers = list(headers) + [(HEADER, str(self._local.count))]
            return start_response(status, headers, exc_info)
        return self.application(environ, counting_start_response)
