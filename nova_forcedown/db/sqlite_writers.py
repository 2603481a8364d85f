"""A queue for the writers of one SQLite file, across threads and processes.

SQLite makes a writer that finds the database locked poll for it, sleeping
up to 100 ms between tries. Under load a writer can then lose its turn
again and again, to the threads of its own process and to other processes
(the API's workers, the agents): a request that should take milliseconds
takes a second. Writer transactions that read first (see
:func:`nova_forcedown.db.engine.write_first`) wait here instead: on a lock of
their process, then on a file lock beside the database, polled every
millisecond, and they leave it when their transaction ends (commit,
rollback or the connection's return to the pool).
"""

import threading
import weakref

import fasteners
from oslo_db import exception as db_exc
import sqlalchemy as sa

# {engine: WriterQueue} of the SQLite file engines this process made.
_QUEUES = weakref.WeakKeyDictionary()
_HOLDS_TURN = 'nova_forcedown.sqlite_writer_turn'
# How often a writer waiting for another process tries the file lock.
POLL_SECONDS = 0.001


class WriterQueue:
    """Turns to write one SQLite file; a turn lasts one transaction."""

    def __init__(self, database_path, timeout):
        self._threads = threading.Lock()
        # Opened at each turn and closed after it: a process forked while
        # it was held never shares it.
        self._processes = fasteners.InterProcessLock(
            database_path + '.writers')
        self.timeout = timeout

    def take_turn(self):
        """Wait for the turn, at most ``timeout`` seconds; whether it came."""
        if not self._threads.acquire(timeout=self.timeout):
            return False
        try:
            taken = self._processes.acquire(
                delay=POLL_SECONDS, max_delay=POLL_SECONDS,
                timeout=self.timeout)
        except BaseException:
            self._threads.release()
            raise
        if not taken:
            self._threads.release()
        return taken

    def end_turn(self):
        try:
            self._processes.release()
        finally:
            self._threads.release()


def attach(engine, timeout):
    """Give ``engine``'s writers a queue; each turn ends with its transaction.

    ``timeout``: how long a writer waits its turn, as it would wait for
    SQLite's lock.
    """
    queue = WriterQueue(engine.url.database, timeout)
    _QUEUES[engine] = queue

    @sa.event.listens_for(engine, 'commit')
    @sa.event.listens_for(engine, 'rollback')
    def _transaction_ended(connection):
        _end_turn(queue, connection.info)

    @sa.event.listens_for(engine, 'checkin')
    def _checked_in(dbapi_connection, connection_record):
        _end_turn(queue, connection_record.info)


def take_turn(connection):
    """Wait for the turn of ``connection``'s transaction to write.

    Nothing to wait for on an engine without a queue (a database in
    memory, the test fixtures' engines) or when the turn is already held.
    """
    queue = _QUEUES.get(connection.engine)
    if queue is None or connection.info.get(_HOLDS_TURN):
        return
    if not queue.take_turn():
        raise db_exc.DBConnectionError(
            'Timed out after %s s waiting for the turn to write the SQLite '
            'database' % queue.timeout)
    connection.info[_HOLDS_TURN] = True


def _end_turn(queue, info):
    if info.pop(_HOLDS_TURN, False):
        queue.end_turn()
