"""The API worker sends an answer written whole in one send().

Each send() on a loopback or LAN socket wakes the client once; waitress
sent the headers and then the body, two system calls and two wake-ups for
every JSON answer. A waitress channel of the worker is driven here on one
end of a socket pair, whose send() calls are recorded: the socket is the
boundary the worker writes to.
"""

import socket

from oslotest import base
from waitress import server
import webob

from nova_forcedown.wsgi import worker

JSON = b'{"version": {"id": "v2.1"}}'


def _json_app(environ, start_response):
    return webob.Response(body=JSON, content_type='application/json')(
        environ, start_response)


def _streamed_app(environ, start_response):
    start_response('200 OK', [('Content-Type', 'application/json')])
    return iter([b'{"servers": [', b']}'])


class _RecordedSocket:
    """A socket whose send() calls are kept, each with the bytes it sent."""

    def __init__(self, sock):
        self._sock = sock
        self.sends = []

    def send(self, data, *flags):
        sent = self._sock.send(data, *flags)
        self.sends.append(bytes(data[:sent]))
        return sent

    def __getattr__(self, name):
        return getattr(self._sock, name)


class _NoThreads:
    """The dispatcher: the test runs each task itself."""

    def add_task(self, task):
        pass


class TestResponseSends(base.BaseTestCase):

    def _answer(self, app, request):
        """(each send()'s bytes, the bytes the client received)."""
        wsgi_server = server.create_server(
            app, host='127.0.0.1', port=0, _start=False,
            _dispatcher=_NoThreads())
        self.addCleanup(wsgi_server.close)
        ours, theirs = socket.socketpair()
        self.addCleanup(ours.close)
        self.addCleanup(theirs.close)
        recorded = _RecordedSocket(ours)
        channel = worker._Channel(wsgi_server, recorded, ('127.0.0.1', 1),
                                  wsgi_server.adj, map={})
        channel.received(request)
        channel.service()
        theirs.settimeout(5)
        received = b''
        while len(received) < sum(map(len, recorded.sends)):
            received += theirs.recv(65536)
        return recorded.sends, received

    def test_a_json_answer_is_one_send(self):
        sends, received = self._answer(
            _json_app, b'GET / HTTP/1.1\r\nHost: localhost\r\n\r\n')
        self.assertEqual(1, len(sends))
        head, body = received.split(b'\r\n\r\n', 1)
        self.assertTrue(head.startswith(b'HTTP/1.1 200 OK'))
        self.assertIn(b'Content-Length: %d' % len(JSON), head)
        self.assertEqual(JSON, body)

    def test_a_head_answer_has_no_body(self):
        sends, received = self._answer(
            _json_app, b'HEAD / HTTP/1.1\r\nHost: localhost\r\n\r\n')
        self.assertEqual(1, len(sends))
        head, body = received.split(b'\r\n\r\n', 1)
        self.assertIn(b'Content-Length: %d' % len(JSON), head)
        self.assertEqual(b'', body)

    def test_a_streamed_answer_is_still_chunked(self):
        sends, received = self._answer(
            _streamed_app, b'GET / HTTP/1.1\r\nHost: localhost\r\n\r\n')
        head, body = received.split(b'\r\n\r\n', 1)
        self.assertIn(b'Transfer-Encoding: chunked', head)
        self.assertEqual(b'D\r\n{"servers": [\r\n2\r\n]}\r\n0\r\n\r\n',
                         body)
