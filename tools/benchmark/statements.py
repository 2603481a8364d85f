"""Each response of the benchmark's API says how many SQL statements it ran.

The benchmark's API server wraps the application in
``CountingMiddleware``, so that every response says in
``X-Nova-Forcedown-SQL-Statements`` how many statements its request ran,
and in ``X-Nova-Forcedown-SQL-Ms`` how long the database driver took to
run them (each cursor's execute; rows fetched later are not in it).
It counts with the tests' own counter (tests/fixtures/sql_statements.py),
so a benchmark's count and a test's agree; the product itself never counts.
"""

import threading
import time

import sqlalchemy as sa

from tests.fixtures import sql_statements

HEADER = 'X-Nova-Forcedown-SQL-Statements'
SQL_TIME_HEADER = 'X-Nova-Forcedown-SQL-Ms'


class CountingMiddleware:
    """WSGI middleware: each response counts its request's statements.

    Each server thread serves one request at a time, so a per-thread count
    is the request's.
    """

    def __init__(self, application, engine):
        self.application = application
        self._local = threading.local()
        sql_statements.listen(engine, self._count)
        sa.event.listen(engine, 'before_cursor_execute', self._started)
        sa.event.listen(engine, 'after_cursor_execute', self._ended)

    def _count(self, statement):
        # A thread that serves no request may run statements too.
        self._local.count = getattr(self._local, 'count', 0) + 1

    def _started(self, *args):
        self._local.started = time.perf_counter()

    def _ended(self, *args):
        self._local.sql_seconds = (getattr(self._local, 'sql_seconds', 0.0) +
                                   time.perf_counter() - self._local.started)

    def __call__(self, environ, start_response):
        self._local.count = 0
        self._local.sql_seconds = 0.0

        def counting_start_response(status, headers, exc_info=None):
            headers = list(headers) + [
                (HEADER, str(self._local.count)),
                (SQL_TIME_HEADER, '%.3f' % (self._local.sql_seconds * 1000))]
            return start_response(status, headers, exc_info)
        return self.application(environ, counting_start_response)
