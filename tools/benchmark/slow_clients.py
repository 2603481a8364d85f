"""Mixed load from 8 clients, alone and beside slow or stalled connections.

Each of 8 clients lists services and forces a host down and up again in
a loop, once alone and once while other connections hold requests open
without ever finishing them; the p99 of both runs are compared.
"""

import itertools
import selectors
import socket
import threading
import time

from tools.benchmark import clients
from tools.benchmark import force_down
from tools.benchmark import latencies


class SlowClients(threading.Thread):
    """Connections that hold a request open without ever finishing it.

    Half send their headers one byte a second; half send complete headers
    with ``Content-Length: 1000`` and one byte of body, then nothing. A
    connection the server closes is opened again at once, so ``count`` stay
    open for as long as this runs.
    """

    STALLED = (b'PUT /v2.1/os-services/disable HTTP/1.1\r\nHost: bench\r\n'
               b'X-Auth-Token: ' + clients.TOKEN.encode() + b'\r\n'
               b'Content-Type: application/json\r\n'
               b'Content-Length: 1000\r\n\r\n{')
    DRIBBLE = b'GET /v2.1/os-services HTTP/1.1\r\nX-Padding: ' + b'a' * 60000

    def __init__(self, port, count):
        super().__init__(daemon=True)
        self.port = port
        self.count = count
        self.reopened = 0
        self._done = threading.Event()
        self._selector = selectors.DefaultSelector()
        self._sent = {}

    def _open(self, number):
        sock = socket.create_connection(('127.0.0.1', self.port))
        sock.setblocking(False)
        if number % 2:
            sock.send(self.STALLED)
        self._sent[sock] = 0
        self._selector.register(sock, selectors.EVENT_READ, number)

    def _reopen_closed(self):
        for key, _ in self._selector.select(timeout=0):
            try:
                if key.fileobj.recv(65536):
                    continue
            except OSError:
                pass
            self._selector.unregister(key.fileobj)
            del self._sent[key.fileobj]
            key.fileobj.close()
            self.reopened += 1
            self._open(key.data)

    def _dribble(self):
        for key in list(self._selector.get_map().values()):
            if key.data % 2 == 0:
                sent = self._sent[key.fileobj]
                try:
                    key.fileobj.send(self.DRIBBLE[sent:sent + 1])
                    self._sent[key.fileobj] = sent + 1
                except OSError:
                    pass

    def run(self):
        for number in range(self.count):
            self._open(number)
        while not self._done.wait(1.0):
            self._reopen_closed()
            self._dribble()

    def stop(self):
        self._done.set()
        self.join()
        for key in list(self._selector.get_map().values()):
            key.fileobj.close()


def _mixed_load_client(port, uuids, hosts, client, deadline):
    """List services, force a host down and up again, until ``deadline``."""
    connection = clients.Client(port)
    times, failures, statements = [], [], set()
    try:
        for index in itertools.count():
            if time.monotonic() > deadline:
                break
            host_index = 1 + (client + clients.CLIENTS * index) % hosts
            requests = [('GET', '/os-services', None, None)] + [
                (method, path, '2.53', body) for method, path, body in (
                    force_down.request(uuids, '2.53', host_index, down)
                    for down in (True, False))]
            for request in requests:
                statements.add(clients.timed_request(
                    connection, request, times, failures))
    finally:
        connection.close()
    return times, failures, statements


def measure(port, uuids, hosts, slow_count, seconds):
    """8 clients of mixed load, without and then beside slow connections."""
    results = {}
    for label, count in (('without', 0), ('with', slow_count)):
        holder = SlowClients(port, count)
        holder.start()
        try:
            time.sleep(1.0 if count else 0)
            deadline = time.monotonic() + seconds
            *outcome, elapsed = clients.concurrently(
                lambda client: _mixed_load_client(port, uuids, hosts, client,
                                                  deadline))
        finally:
            holder.stop()
        figures = latencies.summary(*outcome, elapsed=elapsed)
        figures.update(seconds=round(elapsed, 1), slow_connections=count,
                       reopened_by_server_close=holder.reopened)
        results[label] = figures
    results['p99_ratio'] = round(
        results['with']['p99_ms'] / results['without']['p99_ms'], 2)
    return results
