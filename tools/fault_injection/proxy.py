"""A loopback TCP relay that the fault injector cuts and restores.

Every process of the run reaches the database (and Redis) through one of
these, so a fault is a change of the relay's mode, never of the server:

- ``reset``: every open connection is closed with a RST, and each new one
  is accepted and reset at once, as a crashed or restarted server looks;
- ``blackhole``: nothing goes through either way and new connections are
  accepted but left silent, as a lost network looks; the connections that
  survive it (those whose client did not time out) flow again on restore.

Each connection is relayed by two threads, one per direction, that hold
what they read while the relay is frozen.
"""

import socket
import struct
import threading

FORWARD = 'forward'
RESET = 'reset'
BLACKHOLE = 'blackhole'

_CHUNK = 65536


def _abort(sock):
    """Close ``sock`` with a RST (linger 0) instead of a FIN.

    Shutting its reading side first wakes the relay thread blocked in
    recv() on it, and sends the peer nothing.
    """
    try:
        sock.setsockopt(socket.SOL_SOCKET, socket.SO_LINGER,
                        struct.pack('ii', 1, 0))
        sock.shutdown(socket.SHUT_RD)
    except OSError:
        pass
    try:
        sock.close()
    except OSError:
        pass


class Relay:
    """127.0.0.1:``port`` (a free one) relayed to 127.0.0.1:``target``."""

    def __init__(self, target_port, name='relay'):
        self.name = name
        self.target = ('127.0.0.1', target_port)
        self.mode = FORWARD
        self.accepted = 0
        self._lock = threading.Lock()
        self._flowing = threading.Event()
        self._flowing.set()
        self._closing = threading.Event()
        self._sockets = set()
        self._listener = socket.socket()
        self._listener.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        self._listener.bind(('127.0.0.1', 0))
        self._listener.listen(256)
        self._listener.settimeout(0.25)
        self.port = self._listener.getsockname()[1]
        self._thread = threading.Thread(target=self._accept_loop,
                                        name=name + '-accept', daemon=True)
        self._thread.start()

    def cut(self, mode):
        """Reset or black-hole every connection, open and new."""
        with self._lock:
            self.mode = mode
            self._flowing.clear()
            doomed = list(self._sockets) if mode == RESET else []
            if mode == RESET:
                self._sockets.clear()
        for sock in doomed:
            _abort(sock)

    def restore(self):
        with self._lock:
            self.mode = FORWARD
            self._flowing.set()

    def close(self):
        self._closing.set()
        self._flowing.set()
        self._thread.join(5)
        self._listener.close()
        with self._lock:
            doomed, self._sockets = list(self._sockets), set()
        for sock in doomed:
            _abort(sock)

    def _accept_loop(self):
        while not self._closing.is_set():
            try:
                client, _ = self._listener.accept()
            except socket.timeout:
                continue
            except OSError:
                return
            with self._lock:
                self.accepted += 1
                refused = self.mode == RESET
                if not refused:
                    self._sockets.add(client)
            if refused:
                _abort(client)
                continue
            threading.Thread(target=self._connect, args=(client,),
                             name=self.name + '-connect',
                             daemon=True).start()

    def _connect(self, client):
        """Reach the target once the relay flows, then pump both ways."""
        self._wait_flowing()
        try:
            upstream = socket.create_connection(self.target, timeout=5)
        except OSError:
            self._drop(client)
            return
        upstream.settimeout(None)
        with self._lock:
            alive = client in self._sockets
            if alive:
                self._sockets.add(upstream)
        if not alive:
            _abort(upstream)
            return
        threading.Thread(target=self._pump, args=(upstream, client),
                         name=self.name + '-down', daemon=True).start()
        self._pump(client, upstream)

    def _wait_flowing(self):
        while not self._flowing.wait(0.5):
            if self._closing.is_set():
                return

    def _pump(self, source, sink):
        while True:
            try:
                data = source.recv(_CHUNK)
            except OSError:
                data = b''
            if data:
                self._wait_flowing()
            try:
                if not data or self._closing.is_set():
                    break
                sink.sendall(data)
            except OSError:
                break
        self._drop(source)
        self._drop(sink)

    def _drop(self, sock):
        with self._lock:
            mine = sock in self._sockets
            self._sockets.discard(sock)
        if mine:
            try:
                sock.shutdown(socket.SHUT_RDWR)
            except OSError:
                pass
            sock.close()
