"""Requests to the API, each judged as it is answered.

Every answer must be a 2xx or a 4xx, or a clean 503 (Nova's
``serviceUnavailable`` fault, no traceback) while a dependency is cut or
just after. A 500, a 503 at another time, a connection error outside a
cut, or no answer within the client's timeout is a violation.
"""

import collections
import http.client
import json
import re
import threading
import time

from tools.benchmark import clients as benchmark_clients

# Seconds after a cut ends during which a 503 is still clean: requests
# that were under way, and pooled connections found dead.
GRACE = 8

Answer = collections.namedtuple('Answer', 'status body elapsed error')


class Cuts:
    """When a dependency (database, Redis, the broker) was away.

    The cuts of those named ``harmless`` excuse no failed answer: the API
    must answer as if they were there.
    """

    def __init__(self, harmless=()):
        self.harmless = frozenset(harmless)
        self._lock = threading.Lock()
        self._open = {}
        self._ended = {}
        self._windows = []

    def begin(self, name):
        with self._lock:
            self._open[name] = time.monotonic()

    def end(self, name):
        with self._lock:
            started = self._open.pop(name, None)
            if started is not None:
                self._ended[name] = time.monotonic()
                if name not in self.harmless:
                    self._windows.append((started, self._ended[name]))

    def is_cut(self, name):
        with self._lock:
            return name in self._open

    def quiet_for(self, name):
        """Seconds since ``name``'s last cut ended (None: never cut)."""
        with self._lock:
            ended = self._ended.get(name)
        return None if ended is None else time.monotonic() - ended

    def overlaps(self, start, end):
        """Whether [start, end] meets a cut or its grace."""
        with self._lock:
            if not self.harmless.issuperset(self._open):
                return True
            return any(begun <= end and start <= ended + GRACE
                       for begun, ended in self._windows)


class Api:
    """The API on 127.0.0.1:``port``, its answers counted and judged."""

    def __init__(self, port, timeout, cuts, violations):
        self.port = port
        self.timeout = timeout
        self.cuts = cuts
        self.violations = violations
        self.statuses = collections.Counter()
        # (kind, status, the fault's message, numbers and names elided).
        self.refusals = collections.Counter()
        self._lock = threading.Lock()

    def request(self, kind, method, path, version=None, body=None):
        """An :class:`Answer`; ``kind`` names it in the counts."""
        headers, data = benchmark_clients.request_parts(version, body)
        start = time.monotonic()
        connection = http.client.HTTPConnection('127.0.0.1', self.port,
                                                timeout=self.timeout)
        status, payload, error = 0, b'', None
        try:
            connection.request(method, '/v2.1' + path, body=data,
                               headers=headers)
            response = connection.getresponse()
            payload = response.read()
            status = response.status
        except (OSError, http.client.HTTPException) as exc:
            error = '%s: %s' % (type(exc).__name__, exc)
        finally:
            connection.close()
        answer = Answer(status, payload, time.monotonic() - start, error)
        self._judge(kind, method, path, version, answer, start)
        return answer

    def _judge(self, kind, method, path, version, answer, start):
        label = str(answer.status) if answer.status else (
            'timeout' if 'timed out' in (answer.error or '') else 'error')
        with self._lock:
            self.statuses[(kind, label)] += 1
        what = '%s %s (%s) -> %s in %.1f s: %s' % (
            method, path, version, label, answer.elapsed,
            (answer.error or answer.body[:300].decode('utf-8', 'replace')))
        if 400 <= answer.status < 500:
            with self._lock:
                self.refusals[
                    (kind, answer.status, _message(answer.body))] += 1
        if answer.status and answer.status < 500:
            return
        in_cut = self.cuts.overlaps(start, time.monotonic())
        if label == 'timeout':
            self.violations.add('hang', what)
        elif answer.status == 0:
            if not in_cut:
                self.violations.add('connection-error', what)
        elif answer.status != 503:
            self.violations.add('http-%d' % answer.status, what)
        elif not in_cut:
            self.violations.add('503-outside-cut', what)
        elif not _clean_unavailable(answer.body):
            self.violations.add('unclean-503', what)


def _message(body):
    """The fault's message, its numbers and quoted names elided."""
    try:
        fault = next(iter(json.loads(body).values()))
        text = fault['message']
    except (ValueError, KeyError, TypeError, StopIteration, AttributeError):
        return body[:80].decode('utf-8', 'replace')
    text = re.sub(r'[0-9a-f]{8}-[0-9a-f-]{27}', '<uuid>', text)
    return re.sub(r'\bfi\d+-\d+\b', '<host>', re.sub(r'\d+', 'N', text))


def _clean_unavailable(body):
    try:
        fault = json.loads(body)['serviceUnavailable']
    except (ValueError, KeyError, TypeError):
        return False
    return fault.get('code') == 503 and b'Traceback' not in body


def answers(port):
    """Whether the API answers its version document."""
    connection = http.client.HTTPConnection('127.0.0.1', port, timeout=5)
    try:
        connection.request('GET', '/')
        return connection.getresponse().status == 200
    except (OSError, http.client.HTTPException):
        return False
    finally:
        connection.close()


def json_of(answer):
    try:
        return json.loads(answer.body)
    except ValueError:
        return None
