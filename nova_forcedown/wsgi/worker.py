"""The API's gunicorn worker: waitress reads each request, threads run it.

gunicorn's threaded worker hands a connection to a thread as soon as its
first byte arrives; a client that then sends its headers a byte a second, or
a Content-Length it never delivers, holds that thread, and a few dozen such
clients starve the API. In this worker each process serves gunicorn's
listening sockets with waitress: one asyncore loop reads every connection
without blocking, buffers a request's headers and body (spooled to a
temporary file when large) and hands it to one of ``threads`` application
threads only once it has fully arrived. A slow or stalled client costs a
file descriptor and a buffer, never a thread; a connection that sends
nothing for ``keepalive`` seconds is closed. gunicorn remains the process
manager (workers, restarts, signals, graceful stop).

Errors waitress answers by itself (a malformed chunked body, headers or a
body over the limits) are Nova JSON faults like every other error.

Plain gunicorn can use it too::

    gunicorn -k nova_forcedown.wsgi.worker.BufferingWorker --threads 8 \\
        --keep-alive 60 'nova_forcedown.wsgi.api:application'
"""

import codecs
import ctypes
import ctypes.util
import os
import socket
import time
import wsgiref.util

from gunicorn.workers import base
from oslo_context import context
from oslo_log import log as logging
from waitress import adjustments
from waitress import channel
from waitress import parser
from waitress import server
from waitress import task
from waitress import trigger
from waitress import utilities
from waitress import wasyncore

from nova_forcedown.api import fault
from nova_forcedown.conf import wsgi as wsgi_opts

LOG = logging.getLogger(__name__)

# Seconds the event loop waits for activity before it tells the arbiter it
# is alive and checks whether its parent changed. A stop signal wakes it at
# once (see handle_exit).
LOOP_TIMEOUT = 1.0

# Seconds a worker waits for its application threads to start before it
# reads requests.
THREADS_START_SECONDS = 5.0

# The server stops reading a body at this many times the application's
# [wsgi] max_request_body_size, past which the application refuses it with
# a 413 of its own.
BODY_SLACK = 2

TWO_FRAMINGS_MESSAGE = ('The request has both Transfer-Encoding and '
                        'Content-Length; send only one of them.')
CHUNKED_TWICE_MESSAGE = ('The request says Transfer-Encoding: chunked more '
                         'than once; say it once.')
HTTP10_CHUNKED_MESSAGE = ('Transfer-Encoding is not part of HTTP/1.0; send '
                          'a Content-Length, or use HTTP/1.1.')
HEADERS_TOO_LARGE_MESSAGE = ('The request headers are larger than %d bytes; '
                             'send fewer or shorter ones.')
TLS_MESSAGE = ('The connection opened with a TLS handshake (an https:// '
               'URL?); this endpoint speaks plain HTTP: use http://, or put '
               'a TLS proxy in front of it.')
START_LINE_MESSAGE = 'Start line is invalid'
VERSION_MESSAGE = 'HTTP/%s is not supported; send HTTP/1.1 (or HTTP/1.0).'
ENCODING_MESSAGE = ('The request\'s Transfer-Encoding is not supported; '
                    'send a Content-Length, or Transfer-Encoding: chunked '
                    'alone.')


# The first bytes of a TLS handshake record: a ClientHello, where a
# request's method should be.
_TLS_HANDSHAKE = b'\x16\x03'
# A method is a token (RFC 9110 5.6.2); past this many bytes the start of
# a request is no longer looked at by itself.
_TOKEN = frozenset(b"!#$%&'*+-.^_`|~0123456789"
                   b"ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz")
_METHOD_BYTES = 32


class VersionNotSupported(utilities.Error):
    code = 505
    reason = 'HTTP Version Not Supported'


def start_problem(start):
    """Why the first bytes of a request cannot start one, or None.

    waitress reads up to the end of the headers before it looks at the
    start line; a client speaking TLS or another protocol may never send
    one, and would wait for the connection's timeout. Its first bytes
    already tell.
    """
    start = start.lstrip(b'\r\n')
    if start.startswith(_TLS_HANDSHAKE):
        return TLS_MESSAGE
    method = start[:_METHOD_BYTES].split(b' ', 1)[0]
    if not _TOKEN.issuperset(method):
        return START_LINE_MESSAGE
    return None


class _Headers(dict):
    """The parser's headers, keeping the Transfer-Encoding it takes out."""

    transfer_encoding = ''

    def pop(self, key, *default):
        value = super().pop(key, *default)
        if key == 'TRANSFER_ENCODING':
            self.transfer_encoding = value
        return value


class _RequestParser(parser.HTTPRequestParser):
    """waitress's parser, refusing a body framed two ways (RFC 9112 6.1).

    Behind a proxy that reads the framing differently (Content-Length
    where this server reads chunks, or chunks once where they are said
    twice), such a request smuggles a second one past the proxy; it gets a
    400 and its connection is closed.
    """

    def __init__(self, adj):
        super().__init__(adj)
        self.headers = _Headers()

    def received(self, data):
        if self.completed:
            return 0
        if self.body_rcv is None and len(self.header_plus) < _METHOD_BYTES:
            problem = start_problem(self.header_plus + data)
            if problem is not None:
                return self._refused(utilities.BadRequest(problem), data)
        consumed = super().received(data)
        if self.error is None and self.version[:1] not in ('', '1'):
            return self._refused(
                VersionNotSupported(VERSION_MESSAGE % self.version), data)
        return consumed

    def _refused(self, error, data):
        """Complete the request as ``error``, consuming ``data``."""
        # The error's response needs a request line of its own.
        super().parse_header(b'GET / HTTP/1.0\r\n')
        self.error = error
        self.completed = True
        return len(data)

    def parse_header(self, header_plus):
        super().parse_header(header_plus)
        if 'TRANSFER_ENCODING' in self.headers:
            # waitress ignores it in HTTP/1.0 and reads Content-Length.
            raise parser.ParsingError(HTTP10_CHUNKED_MESSAGE)
        if not self.chunked:
            return
        if 'CONTENT_LENGTH' in self.headers:
            raise parser.ParsingError(TWO_FRAMINGS_MESSAGE)
        codings = self.headers.transfer_encoding.lower().split(',')
        if [coding.strip(' \t') for coding in codings].count('chunked') > 1:
            raise parser.ParsingError(CHUNKED_TWICE_MESSAGE)


class JsonFaultTask(task.ErrorTask):
    """waitress's own error responses, as Nova's JSON faults.

    Each carries a request id, and a refusal of the client's request is
    one INFO line, as the application's own client errors are.
    """

    def execute(self):
        request_id = context.generate_request_id()
        status = self.request.error.code
        message = self._message()
        if status != 500:
            LOG.info('Client error %(status)d: %(message)s (from %(peer)s)',
                     {'status': status, 'message': fault.loggable(message),
                      'peer': _peer(self.channel.addr)},
                     context=context.RequestContext(request_id=request_id))
        body = fault.body(status, message)
        self.status = '%s %s' % (status, self.request.error.reason)
        self.response_headers.extend([
            ('Content-Type', 'application/json'),
            ('X-Openstack-Request-Id', request_id),
            ('X-Compute-Request-Id', request_id)])
        self.set_close_on_finish()
        self.content_length = len(body)
        self.write(body)

    def _message(self):
        error = self.request.error
        adj = self.channel.adj
        if error.code == 413:
            return fault.BODY_TOO_LARGE_MESSAGE % (
                adj.max_request_body_size // BODY_SLACK)
        if error.code == 431:
            return HEADERS_TOO_LARGE_MESSAGE % adj.max_request_header_size
        if error.code == 501:
            return ENCODING_MESSAGE
        return error.body or error.reason


class _OneSendTask(task.WSGITask):
    """A response whose body is one write goes out in one send().

    waitress sends the headers, then the body, each as it is written: two
    system calls, and two wake-ups of the client, for every answer the
    API makes (a JSON document is written whole).
    """

    def write(self, data):
        if (self.complete and not self.wrote_header and self.has_body and
                not self.chunked_response and data and
                self.content_length == len(data)):
            header = self.build_response_header()
            self.wrote_header = True
            self.content_bytes_written += len(data)
            self.channel.write_soon(header + data)
            return
        super().write(data)


class _Channel(channel.HTTPChannel):
    task_class = _OneSendTask
    error_task_class = JsonFaultTask
    parser_class = _RequestParser


class _TcpServer(server.TcpWSGIServer):
    channel_class = _Channel


class _UnixServer(server.UnixWSGIServer):
    channel_class = _Channel


class BufferingWorker(base.Worker):
    """A gunicorn worker serving its listeners with waitress."""

    # waitress adjustments beyond what gunicorn's settings give; the API
    # command sets them from [wsgi] (see configured()).
    options = {
        'max_request_body_size': (
            BODY_SLACK * wsgi_opts.MAX_REQUEST_BODY_SIZE),
        'max_request_header_size': 64 * 1024,
        # A response is queued whole (up to 16 MiB), so that a client that
        # reads slowly holds no thread either; past 64 KiB the queue is a
        # temporary file, not a second copy of the body in memory.
        'outbuf_overflow': 64 * 1024,
    }

    def run(self):
        _limit_malloc_arenas()
        dispatcher = task.ThreadedTaskDispatcher()
        dispatcher.set_thread_count(self.cfg.threads)
        _wait_for_idle_threads(dispatcher)
        socket_map = self._listen(dispatcher)
        # Written to by handle_exit: the loop sees the stop at once, not
        # up to LOOP_TIMEOUT later.
        self._wake = trigger.trigger(socket_map)
        next_look = 0.0
        while self.alive:
            # At most twice a LOOP_TIMEOUT, not at every event: a request
            # is three or four, and each system call here let the thread
            # running the request take the GIL and give it back.
            if time.monotonic() >= next_look:
                next_look = time.monotonic() + LOOP_TIMEOUT / 2
                self.notify()
                if self.ppid != os.getppid():
                    self.log.info('Parent changed, shutting down: %s', self)
                    break
            wasyncore.loop(timeout=LOOP_TIMEOUT, map=socket_map,
                           use_poll=True, count=1)
        # The stop is under way: a later SIGTERM (systemd's beside the
        # arbiter's) must not write to the pipe once _stop has closed it.
        self._wake = None
        self._stop(socket_map, dispatcher)

    def handle_exit(self, sig, frame):
        """SIGTERM: stop gracefully, beginning now."""
        super().handle_exit(sig, frame)
        wake = getattr(self, '_wake', None)
        if wake is not None:
            # One byte down a pipe: safe in a signal handler.
            wake.pull_trigger()

    def _adjustments(self):
        return adjustments.Adjustments(
            sockets=[listener.sock for listener in self.sockets],
            threads=self.cfg.threads,
            connection_limit=self.cfg.worker_connections,
            channel_timeout=self.cfg.keepalive,
            # Stalled connections are found by this sweep; run it often.
            cleanup_interval=max(1, min(30, self.cfg.keepalive // 2)),
            # A reset connection is the client's business, not a traceback.
            log_socket_errors=False,
            # Proxy headers are oslo.middleware's to honour, when
            # [oslo_middleware] enable_proxy_headers_parsing says so.
            clear_untrusted_proxy_headers=False,
            asyncore_use_poll=True,
            ident='nova-forcedown',
            **self.options)

    def _listen(self, dispatcher):
        adj = self._adjustments()
        socket_map = {}
        for sock in adj.sockets:
            server_class = (_UnixServer if sock.family == socket.AF_UNIX
                            else _TcpServer)
            listener = server_class(
                _access_logged(_files_sent_as_they_are(self.wsgi),
                               self.log.access_log), socket_map,
                _sock=sock, dispatcher=dispatcher, adj=adj,
                bind_socket=False, sockinfo=(sock.family, sock.type,
                                             sock.proto, sock.getsockname()))
            listener.server_name = _server_name(sock)
        return socket_map

    def _stop(self, socket_map, dispatcher):
        """Stop accepting, let requests in flight finish, then close."""
        for dispatcher_ in list(socket_map.values()):
            if isinstance(dispatcher_, server.BaseWSGIServer):
                dispatcher_.close()
        deadline = time.monotonic() + self.cfg.graceful_timeout
        while _busy(socket_map, dispatcher) and time.monotonic() < deadline:
            self.notify()
            wasyncore.loop(timeout=0.1, map=socket_map, use_poll=True,
                           count=1)
        dispatcher.shutdown(timeout=max(0.0, deadline - time.monotonic()))
        wasyncore.close_all(socket_map)


def _wait_for_idle_threads(dispatcher, timeout=THREADS_START_SECONDS):
    """Wait until each application thread has started and waits for work.

    The listening sockets already queue connections (the arbiter bound
    them): a request read before then would find no idle thread, and
    waitress would warn "Task queue depth is 1" about a worker that is
    only starting.
    """
    deadline = time.monotonic() + timeout
    while dispatcher.active_count and time.monotonic() < deadline:
        time.sleep(0.001)


# glibc's mallopt() parameter for the number of malloc arenas.
_M_ARENA_MAX = -8
_MALLOC_ARENAS = 2


def _limit_malloc_arenas():
    """Keep glibc from giving each application thread its own heap.

    waitress wakes its idle threads in turn, so every thread soon renders
    a large listing, and glibc keeps what each freed in an arena of its
    own: a worker grows by one listing's size per thread. Two arenas bring
    it back to what one busy thread needs. Other C libraries are left as
    they are.
    """
    try:
        libc = ctypes.CDLL(ctypes.util.find_library('c'))
        libc.mallopt(_M_ARENA_MAX, _MALLOC_ARENAS)
    except (OSError, AttributeError, TypeError):
        pass


def _server_name(sock):
    """SERVER_NAME for requests without a Host: the address bound."""
    if sock.family == socket.AF_UNIX:
        return 'localhost'
    host = sock.getsockname()[0]
    return '[%s]' % host if ':' in host else host


def _peer(addr):
    """The client's address, or 'local' on a Unix socket."""
    return addr[0] if isinstance(addr, tuple) else 'local'


def _busy(socket_map, dispatcher):
    """Whether a request is queued, running, or still being sent back."""
    if dispatcher.queue or dispatcher.active_count:
        return True
    return any(isinstance(item, channel.HTTPChannel) and
               (item.requests or item.total_outbufs_len)
               for item in socket_map.values())


def _files_sent_as_they_are(app):
    """``app``, a body it answers as a file handed to waitress unread.

    A listing's text is written to a file before it is sent
    (api/request.listing_response). waitress copies any other body into
    its own buffer, a second temporary file past ``outbuf_overflow``, and
    sends from there; ``wsgi.file_wrapper`` has it send from the file
    itself, and close it once sent.
    """

    def sending_files(environ, start_response):
        body = app(environ, start_response)
        if type(body) is wsgiref.util.FileWrapper:
            return environ['wsgi.file_wrapper'](body.filelike, body.blksize)
        return body
    return sending_files


def _access_logged(app, logger):
    """``app``, logging one line per request as gunicorn's access log."""

    def logged(environ, start_response):
        started = time.monotonic()
        answer = {}

        def start(status, headers, exc_info=None):
            answer['status'] = status.split(' ', 1)[0]
            answer['length'] = dict((name.lower(), value) for name, value
                                    in headers).get('content-length', '-')
            return start_response(status, headers, exc_info)

        try:
            return app(environ, start)
        finally:
            logger.info('%s "%s %s" %s %s %.3f',
                        environ.get('REMOTE_ADDR', '-'),
                        _printable(environ.get('REQUEST_METHOD', '')),
                        _printable(_request_target(environ)),
                        answer.get('status', '-'), answer.get('length', '-'),
                        time.monotonic() - started)
    return logged


def _request_target(environ):
    path = environ.get('SCRIPT_NAME', '') + environ.get('PATH_INFO', '')
    query = environ.get('QUERY_STRING')
    return path + '?' + query if query else path


def _printable(text):
    """WSGI text (bytes as latin-1) with control and non-ASCII escaped."""
    return codecs.escape_encode(text.encode('latin-1', 'replace'))[0].decode(
        'ascii')


def configured(conf):
    """BufferingWorker with the body limit of ``conf``'s [wsgi] group.

    The application refuses a body over [wsgi] max_request_body_size with
    a 413 fault of its own; the server stops reading one at BODY_SLACK
    times that, so a client cannot make it buffer an unbounded chunked
    body.
    """
    options = dict(BufferingWorker.options, max_request_body_size=(
        BODY_SLACK * conf.wsgi.max_request_body_size))
    return type('BufferingWorker', (BufferingWorker,), {'options': options})
