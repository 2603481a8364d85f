"""Debugging aid: the SQL statements of each request, in a response header.

Off unless the server starts with ``NOVA_FORCEDOWN_COUNT_SQL=1`` in its
environment (tools/benchmark.py does so). Then every response carries
``X-Nova-Forcedown-SQL-Statements``: the statements the request ran on the
API's engine, transaction control (BEGIN, COMMIT...) not counted. Each
server thread serves one request at a time, so a per-thread counter is the
request's.
"""

import os
import threading

import sqlalchemy as sa

ENV = 'NOVA_FORCEDOWN_COUNT_SQL'
HEADER = 'X-Nova-Forcedown-SQL-Statements'

_TRANSACTION_CONTROL = ('BEGIN', 'COMMIT', 'ROLLBACK', 'SAVEPOINT',
                        'RELEASE')


def enabled(environ=os.environ):
    return environ.get(ENV, '').lower() in ('1', 'true', 'yes')


class StatementCounter:
    """WSGI middleware counting the statements run on ``engine``."""

    def __init__(self, application, engine):
        self.application = application
        self._local = threading.local()
        sa.event.listen(engine, 'before_cursor_execute', self._count)

    def _count(self, conn, cursor, statement, parameters, context,
               executemany):
        if not statement.lstrip().upper().startswith(_TRANSACTION_CONTROL):
            self._local.count = getattr(self._local, 'count', 0) + 1

    def __call__(self, environ, start_response):
        self._local.count = 0

        def counting_start_response(status, headers, exc_info=None):
            headers = list(headers) + [(HEADER, str(self._local.count))]
            return start_response(status, headers, exc_info)
        return self.application(environ, counting_start_response)
