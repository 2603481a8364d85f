"""The API under test, on a loopback port, and its memory.

The server is counting_api: nova-forcedown-api's gunicorn server, workers
and settings, with the SQL statements of each request counted.
"""

import contextlib
import http.client
import os
import signal
import socket
import subprocess
import sys
import threading
import time

import psutil

from tools.benchmark import clients

# The directory that holds tools/, from which ``python -m`` finds it.
CHECKOUT = os.path.dirname(os.path.dirname(os.path.dirname(
    os.path.abspath(__file__))))


def free_port():
    with socket.socket() as probe:
        probe.bind(('127.0.0.1', 0))
        return probe.getsockname()[1]


class Server:
    """The API server, counting SQL statements, on a loopback port."""

    def __init__(self, database, workers, threads, max_limit=None,
                 name='api', options=None):
        """``max_limit``: the [api] option (default: the product's).

        ``options``: more of the configuration, {section: {name: value}}
        (oslo.config merges a section named twice).
        """
        self.port = free_port()
        self.config = os.path.join(database.directory, name + '.conf')
        # SQLite files use a NullPool, which takes no pool timeout.
        pool = ('pool_timeout =\n' if database.backend == 'sqlite' else '')
        with open(self.config, 'w') as config:
            config.write(
                '[DEFAULT]\nstate_path = %s\n'
                '[api]\nauth_strategy = noauth2\n%s'
                '[database]\nconnection = %s\n%s'
                '[wsgi]\nhost = 127.0.0.1\nport = %d\nworkers = %d\n'
                'threads = %d\n'
                % (database.directory,
                   '' if max_limit is None else 'max_limit = %d\n' % max_limit,
                   database.url_text.replace('%', '%%'),
                   pool, self.port, workers, threads))
            for section, values in (options or {}).items():
                config.write('[%s]\n' % section + ''.join(
                    '%s = %s\n' % (name, str(value).replace('%', '%%'))
                    for name, value in values.items()))
        self.log_path = os.path.join(database.directory, name + '.log')
        self.process = None

    @contextlib.contextmanager
    def serving(self):
        """Started for the block, stopped after; its log on a failure."""
        try:
            self.start()
            yield self
        except Exception:
            if self.process is not None:
                sys.stderr.write(self.log())
            raise
        finally:
            self.stop()

    def start(self):
        self._log = open(self.log_path, 'wb')
        self.process = subprocess.Popen(
            [sys.executable, '-m', 'tools.benchmark.counting_api',
             '--config-file', self.config], cwd=CHECKOUT, stdout=self._log,
            stderr=subprocess.STDOUT, stdin=subprocess.DEVNULL)
        deadline = time.monotonic() + 60
        while time.monotonic() < deadline:
            if self.process.poll() is not None:
                raise RuntimeError('the API exited with %s:\n%s' % (
                    self.process.returncode, self.log()))
            if self._answers() and len(self.processes()) > 1:
                return
            time.sleep(0.2)
        raise RuntimeError('the API did not answer:\n' + self.log())

    def _answers(self):
        client = clients.Client(self.port)
        try:
            return client.request('GET', '/')[0] == 200
        except (OSError, http.client.HTTPException):
            return False
        finally:
            client.close()

    def processes(self):
        try:
            master = psutil.Process(self.process.pid)
            return [master] + master.children(recursive=True)
        except psutil.NoSuchProcess:
            return []

    def rss(self):
        """(sum over master and workers, largest single process) in bytes."""
        sizes = []
        for proc in self.processes():
            try:
                sizes.append(proc.memory_info().rss)
            except psutil.NoSuchProcess:
                pass
        return sum(sizes), max(sizes or [0])

    def log(self):
        with open(self.log_path, errors='replace') as log:
            return log.read()[-4000:]

    def stop(self):
        if self.process is not None and self.process.poll() is None:
            self.process.send_signal(signal.SIGTERM)
            try:
                self.process.wait(20)
            except subprocess.TimeoutExpired:
                self.process.kill()
                self.process.wait()
        if self.process is not None:
            self._log.close()


class RssSampler(threading.Thread):
    """Peak RSS of the server's processes, sampled every 50 ms."""

    def __init__(self, server):
        super().__init__(daemon=True)
        self.server = server
        self.peak_sum = self.peak_process = 0
        self._done = threading.Event()

    def run(self):
        while not self._done.is_set():
            total, largest = self.server.rss()
            self.peak_sum = max(self.peak_sum, total)
            self.peak_process = max(self.peak_process, largest)
            self._done.wait(0.05)

    def stop(self):
        self._done.set()
        self.join()

    def figures(self):
        return {'peak_sum_mb': round(self.peak_sum / 2 ** 20, 1),
                'peak_process_mb': round(self.peak_process / 2 ** 20, 1)}
