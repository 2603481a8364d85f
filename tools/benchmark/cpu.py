"""CPU seconds of the processes a measurement loads, servers included.

Read with psutil from /proc: a server that is not ours (Redis, a
PostgreSQL backend) is measured as any process the user may read.
"""

import threading

import psutil
import sqlalchemy as sa


def seconds(process):
    """User plus system CPU seconds a process has spent so far."""
    times = process.cpu_times()
    return times.user + times.system


def database_server(url):
    """A matcher of the server processes that serve database ``url``.

    PostgreSQL forks a backend per connection, whose title names the
    database; None for SQLite (in the client's process) and for servers
    whose connections are threads of one process (MySQL, MariaDB).
    """
    url = sa.engine.make_url(url)
    if url.get_backend_name() != 'postgresql':
        return None
    tag = ' %s ' % url.database

    def matches(process):
        return (process.info['name'] == 'postgres' and
                tag in ' '.join(process.info['cmdline'] or ()) + ' ')
    return matches


def pid_matcher(pid):
    """A matcher of the one process ``pid`` (a Redis server, say)."""
    return lambda process: process.pid == pid


class Sampler(threading.Thread):
    """CPU seconds matching processes spend from start() to stop().

    Polled every ``interval`` s, since a server process may exit before
    the end (a backend whose connection closed): what it spent after its
    last poll is missed. A process first seen after start() counts from 0.
    """

    def __init__(self, matcher, interval=0.5):
        super().__init__(daemon=True)
        self._matcher = matcher
        self._interval = interval
        self._first = self._matching()
        self._last = dict(self._first)
        self._done = threading.Event()

    def _matching(self):
        found = {}
        for process in psutil.process_iter(['name', 'cmdline']):
            try:
                if self._matcher(process):
                    found[process.pid] = seconds(process)
            except psutil.Error:
                pass
        return found

    def run(self):
        while not self._done.wait(self._interval):
            self._last.update(self._matching())

    def stop(self):
        """CPU seconds spent since the sampler was created."""
        self._done.set()
        if self.is_alive():
            self.join()
        self._last.update(self._matching())
        return round(sum(value - self._first.get(pid, 0.0)
                         for pid, value in self._last.items()), 2)
