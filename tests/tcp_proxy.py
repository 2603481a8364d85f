"""A TCP proxy on loopback that a test can cut and restore.

It stands between the processes under test and a database server, so a
test can make the database "go away" without touching the real server:
:meth:`TCPProxy.cut` resets every open connection and then either refuses
new ones (``'reset'``: accepted and closed at once, as a stopped server
looks) or accepts and never answers them (``'blackhole'``: a lost network,
so only the client's own timeouts help). :meth:`TCPProxy.restore` forwards
again. Only loopback is ever used.
"""

import select
import socket
import struct
import threading

import fixtures

FORWARD = 'forward'
RESET = 'reset'
BLACKHOLE = 'blackhole'


def _reset(sock):
    """Close with RST rather than FIN, as a crashed peer does."""
    try:
        sock.setsockopt(socket.SOL_SOCKET, socket.SO_LINGER,
                        struct.pack('ii', 1, 0))
    except OSError:
        pass
    sock.close()


class TCPProxy(fixtures.Fixture):
    """Forward 127.0.0.1:``port`` to 127.0.0.1:``upstream_port``."""

    def __init__(self, upstream_port, upstream_host='127.0.0.1'):
        super().__init__()
        if upstream_host not in ('127.0.0.1', 'localhost', '::1'):
            raise ValueError('the proxy only forwards to loopback')
        self.upstream = (upstream_host, upstream_port)
        self.mode = FORWARD
        self.connections_accepted = 0
        self._lock = threading.Lock()
        self._open = set()
        self._stopped = threading.Event()

    def _setUp(self):
        self._listener = socket.socket()
        self._listener.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        self._listener.bind(('127.0.0.1', 0))
        self._listener.listen(128)
        self._listener.settimeout(0.2)
        self.port = self._listener.getsockname()[1]
        thread = threading.Thread(target=self._accept_loop, daemon=True,
                                  name='tcp-proxy')
        thread.start()
        self.addCleanup(self._stop, thread)

    def _stop(self, thread):
        self._stopped.set()
        thread.join(5)
        self._listener.close()
        self._close_all()

    def cut(self, mode=RESET):
        """Drop every connection; new ones are reset or black-holed."""
        with self._lock:
            self.mode = mode
        self._close_all()

    def restore(self):
        with self._lock:
            self.mode = FORWARD

    def _close_all(self):
        with self._lock:
            sockets, self._open = self._open, set()
        for sock in sockets:
            _reset(sock)

    def _accept_loop(self):
        while not self._stopped.is_set():
            try:
                client, _ = self._listener.accept()
            except socket.timeout:
                continue
            except OSError:
                return
            with self._lock:
                self.connections_accepted += 1
                mode = self.mode
                if mode == BLACKHOLE:
                    self._open.add(client)
            if mode == RESET:
                _reset(client)
            elif mode == FORWARD:
                threading.Thread(target=self._forward, args=(client,),
                                 daemon=True, name='tcp-proxy-pipe').start()

    def _forward(self, client):
        try:
            upstream = socket.create_connection(self.upstream, timeout=5)
        except OSError:
            _reset(client)
            return
        pair = (client, upstream)
        with self._lock:
            if self.mode != FORWARD:
                _reset(client)
                _reset(upstream)
                return
            self._open.update(pair)
        try:
            self._pump(client, upstream)
        finally:
            with self._lock:
                self._open.difference_update(pair)
            for sock in pair:
                try:
                    sock.close()
                except OSError:
                    pass

    def _pump(self, client, upstream):
        peers = {client: upstream, upstream: client}
        while not self._stopped.is_set():
            try:
                readable, _, _ = select.select(list(peers), [], [], 0.5)
                for sock in readable:
                    data = sock.recv(65536)
                    if not data:
                        return
                    peers[sock].sendall(data)
            except (OSError, ValueError):
                return
