"""Run the project's real console scripts on loopback for tests."""

import os
import signal
import socket
import subprocess
import sys
import tempfile
import time
import urllib.error
import urllib.request

import fixtures

BIN_DIR = os.path.dirname(sys.executable)


def free_port():
    with socket.socket() as probe:
        probe.bind(('127.0.0.1', 0))
        return probe.getsockname()[1]


def script(name):
    """Path of a console script installed next to this interpreter."""
    return os.path.join(BIN_DIR, name)


def write_config(directory, text):
    path = os.path.join(directory, 'nova_forcedown.conf')
    with open(path, 'w') as config:
        config.write(text)
    return path


def http_get(url, headers=None, timeout=5):
    """(status, body bytes) of a GET; errors are returned, not raised."""
    request = urllib.request.Request(url, headers=headers or {})
    try:
        with urllib.request.urlopen(request, timeout=timeout) as response:
            return response.status, response.read()
    except urllib.error.HTTPError as error:
        return error.code, error.read()


def wait_until(predicate, timeout=30, interval=0.1):
    """Poll ``predicate`` until it returns a true value; return that value.

    The default timeout is generous because CI runs process tests two at a
    time beside database-heavy ones; a passing wait returns at once.
    """
    deadline = time.monotonic() + timeout
    while True:
        value = predicate()
        if value or time.monotonic() > deadline:
            return value
        time.sleep(interval)


def wait_for_http(url, timeout=20, process=None):
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if process is not None and process.poll() is not None:
            raise AssertionError('process exited with %s before serving'
                                 % process.returncode)
        try:
            http_get(url, timeout=1)
            return
        except OSError:
            time.sleep(0.1)
    raise AssertionError('%s did not answer within %ss' % (url, timeout))


class Process(fixtures.Fixture):
    """A console script running for the duration of a test.

    Its output goes to a file; ``output()`` reads it. On clean-up it gets
    SIGTERM, then SIGKILL if it lingers.
    """

    def __init__(self, argv, env=None):
        super().__init__()
        self.argv = argv
        self.env = env

    def _setUp(self):
        self._log_file = tempfile.NamedTemporaryFile(
            prefix='nf-process-', suffix='.log', delete=False)
        self.addCleanup(os.unlink, self._log_file.name)
        env = dict(os.environ, **(self.env or {}))
        self.process = subprocess.Popen(
            self.argv, stdout=self._log_file, stderr=subprocess.STDOUT,
            stdin=subprocess.DEVNULL, env=env)
        self.addCleanup(self.stop)

    def stop(self, signum=signal.SIGTERM, timeout=15):
        """Send ``signum`` and wait; returns the exit code.

        A process still running after ``timeout`` is killed.
        """
        if self.process.poll() is None:
            self.process.send_signal(signum)
            try:
                self.process.wait(timeout)
            except subprocess.TimeoutExpired:
                self.process.kill()
                self.process.wait()
        return self.process.returncode

    def output(self):
        with open(self._log_file.name, errors='replace') as log:
            return log.read()


def run(argv, env=None, timeout=60, cwd=None):
    """Run a command to completion; returns CompletedProcess (text)."""
    return subprocess.run(argv, capture_output=True, text=True,
                          timeout=timeout, stdin=subprocess.DEVNULL,
                          env=dict(os.environ, **(env or {})), cwd=cwd)
