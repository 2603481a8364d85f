"""Slow, stalled and broken clients against the real nova-forcedown-api.

The server runs one worker of two threads, so a client that could hold a
thread while it dribbles its request would starve it with two connections;
these tests open twenty times that many.
"""

import json
import os
import re
import socket

import fixtures
import psutil
import testtools

from tests.fixtures import processes

ADMIN = {'X-Auth-Token': 'admin:0123abcd'}
SILENCE_TIMEOUT = 2
DISABLE = (b'PUT /v2.1/os-services/disable HTTP/1.1\r\nHost: test\r\n'
           b'X-Auth-Token: admin:0123abcd\r\n'
           b'Content-Type: application/json\r\n')
CREATE_AGGREGATE = (b'POST /v2.1/os-aggregates HTTP/1.1\r\nHost: test\r\n'
                    b'X-Auth-Token: admin:0123abcd\r\n'
                    b'Content-Type: application/json\r\n')
AGGREGATE = b'{"aggregate": {"name": "smuggled"}}'


class _ServerTestCase(testtools.TestCase):

    def setUp(self):
        super().setUp()
        self.state = self.useFixture(fixtures.TempDir()).path
        self.config = processes.write_config(self.state, (
            '[DEFAULT]\nstate_path = %s\n'
            '[wsgi]\nworkers = 1\nthreads = 2\nclient_socket_timeout = %d\n'
            % (self.state, SILENCE_TIMEOUT)))
        self.port = processes.free_port()
        self.server = self.useFixture(processes.Process(
            [processes.script('nova-forcedown-api'), '--dev',
             '--config-file', self.config, '--port', str(self.port)]))
        processes.wait_for_http('http://127.0.0.1:%d/' % self.port,
                                process=self.server.process)

    def connect(self):
        sock = socket.create_connection(('127.0.0.1', self.port), timeout=30)
        self.addCleanup(sock.close)
        return sock

    def exchange(self, raw):
        """Send ``raw``, then read until the server closes the connection."""
        sock = self.connect()
        sock.sendall(raw)
        return _read_to_close(sock)

    def list_services(self):
        return processes.http_get(
            'http://127.0.0.1:%d/v2.1/os-services' % self.port, ADMIN,
            timeout=10)

    def list_aggregates(self):
        return processes.http_get(
            'http://127.0.0.1:%d/v2.1/os-aggregates' % self.port, ADMIN,
            timeout=10)

    def assertNoTraceback(self):
        self.assertNotIn('Traceback', self.server.output())


def _read_to_close(sock):
    received = b''
    while True:
        try:
            data = sock.recv(65536)
        except ConnectionResetError:
            return received
        if not data:
            return received
        received += data


def _fault(response):
    head, _, body = response.partition(b'\r\n\r\n')
    status = int(head.split(b' ', 2)[1])
    return status, json.loads(body)


class TestSlowClients(_ServerTestCase):

    def test_slow_and_stalled_clients_hold_no_thread(self):
        for number in range(40):
            sock = self.connect()
            if number % 2:
                # Headers complete, then one byte of a 1000-byte body.
                sock.sendall(DISABLE + b'Content-Length: 1000\r\n\r\n{')
            else:
                # Headers sent a byte at a time, and then nothing.
                sock.sendall(b'G')
                sock.sendall(b'E')
        for _ in range(10):
            status, body = self.list_services()
            self.assertEqual(200, status, body)
        self.assertNoTraceback()

    def test_a_silent_connection_is_closed(self):
        sock = self.connect()
        sock.sendall(DISABLE + b'Content-Length: 1000\r\n\r\n{')
        # The server answers nothing and closes it after
        # client_socket_timeout; the 30 s socket timeout would raise.
        self.assertEqual(b'', _read_to_close(sock))
        self.assertNoTraceback()

    def test_a_large_listing_reaches_slow_readers_whole(self):
        # Over 64 KiB a listing is sent from a temporary file: clients
        # that have not read theirs hold neither thread nor more than
        # that file, and once each has read it the files are closed.
        listing = self.large_aggregates_listing()
        # gunicorn's heartbeat file, and any other of the server's own.
        files_before = self.temporary_files_open()
        readers = []
        for _ in range(6):
            sock = self.connect()
            sock.sendall(b'GET /v2.1/os-aggregates HTTP/1.1\r\nHost: test'
                         b'\r\nX-Auth-Token: admin:0123abcd\r\n'
                         b'Connection: close\r\n\r\n')
            readers.append(sock)
        status, body = self.list_services()
        self.assertEqual(200, status, body)
        for sock in readers:
            head, _, body = _read_to_close(sock).partition(b'\r\n\r\n')
            self.assertIn(b' 200 OK', head)
            self.assertEqual(listing, json.loads(body))
        processes.wait_until(
            lambda: self.temporary_files_open() == files_before)
        self.assertNoTraceback()

    def large_aggregates_listing(self):
        """An aggregate listing of about 200 KB, as a fast client reads it."""
        status, body = processes.http_request(
            'POST', 'http://127.0.0.1:%d/v2.1/os-aggregates' % self.port,
            {'aggregate': {'name': 'large'}}, ADMIN)
        self.assertEqual(200, status, body)
        action = 'http://127.0.0.1:%d/v2.1/os-aggregates/%d/action' % (
            self.port, json.loads(body)['aggregate']['id'])
        for batch in range(3):
            metadata = {'key-%d-%d' % (batch, number): 'v' * 255
                        for number in range(250)}
            status, body = processes.http_request(
                'POST', action, {'set_metadata': {'metadata': metadata}},
                ADMIN)
            self.assertEqual(200, status, body)
        status, body = self.list_aggregates()
        self.assertEqual(200, status, body)
        self.assertGreater(len(body), 3 * 64 * 1024)
        return json.loads(body)

    def temporary_files_open(self):
        """The deleted (temporary) files the server's processes hold."""
        master = psutil.Process(self.server.process.pid)
        return sorted(
            path for process in [master] + master.children(True)
            for path in _open_paths(process) if '(deleted)' in path)


def _open_paths(process):
    fds = '/proc/%d/fd' % process.pid
    paths = []
    for fd in os.listdir(fds):
        try:
            paths.append(os.readlink(os.path.join(fds, fd)))
        except FileNotFoundError:
            pass
    return paths


class TestBrokenTransfers(_ServerTestCase):

    def test_bad_chunk_size_is_a_400_fault(self):
        status, body = _fault(self.exchange(
            DISABLE + b'Transfer-Encoding: chunked\r\n\r\nzz\r\n{}\r\n'
            b'0\r\n\r\n'))
        self.assertEqual(400, status)
        self.assertEqual(400, body['badRequest']['code'])

    def test_unterminated_chunk_is_a_400_fault(self):
        status, body = _fault(self.exchange(
            DISABLE + b'Transfer-Encoding: chunked\r\n\r\n2\r\n{}XX'
            b'0\r\n\r\n'))
        self.assertEqual(400, status)
        self.assertIn('badRequest', body)

    def test_headers_over_the_limit_are_refused(self):
        sock = self.connect()
        sock.sendall(b'GET /v2.1/os-services HTTP/1.1\r\nHost: test\r\n'
                     b'X-Padding: ' + b'a' * 60000 + b'\r\n')
        sock.sendall(b'X-More: ' + b'a' * 10000 + b'\r\n\r\n')
        status, body = _fault(_read_to_close(sock))
        self.assertEqual(431, status)
        # Nova's name for a code it has no name of its own for.
        self.assertIn('65536 bytes', body['computeFault']['message'])

    def test_a_body_framed_two_ways_is_refused_and_the_rest_dropped(self):
        # A proxy reading Content-Length would see one request; read as
        # chunked, a second hides in the same bytes. Neither is served.
        chunked = b'%x\r\n%s\r\n0\r\n\r\n' % (len(AGGREGATE), AGGREGATE)
        response = self.exchange(
            CREATE_AGGREGATE + b'Transfer-Encoding: chunked\r\n'
            b'Content-Length: %d\r\n\r\n' % len(chunked) + chunked +
            b'GET /v2.1/os-services HTTP/1.1\r\nHost: test\r\n'
            b'X-Auth-Token: admin:0123abcd\r\n\r\n')
        self.assertEqual(1, response.count(b'HTTP/1.'), response)
        status, body = _fault(response)
        self.assertEqual(400, status)
        self.assertIn('Transfer-Encoding and Content-Length',
                      body['badRequest']['message'])
        self.assertEqual(200, self.list_aggregates()[0])
        self.assertEqual({'aggregates': []},
                         json.loads(self.list_aggregates()[1]))

    def test_chunked_twice_is_refused(self):
        chunked = b'%x\r\n%s\r\n0\r\n\r\n' % (len(AGGREGATE), AGGREGATE)
        for header in (b'Transfer-Encoding: chunked, chunked\r\n',
                       b'Transfer-Encoding: chunked\r\n' * 2):
            status, body = _fault(self.exchange(
                CREATE_AGGREGATE + header + b'\r\n' + chunked))
            self.assertEqual(400, status)
            self.assertIn('more than once', body['badRequest']['message'])
        self.assertEqual({'aggregates': []},
                         json.loads(self.list_aggregates()[1]))

    def test_chunked_in_http10_is_refused(self):
        request = CREATE_AGGREGATE.replace(b'HTTP/1.1', b'HTTP/1.0')
        status, body = _fault(self.exchange(
            request + b'Transfer-Encoding: chunked\r\n'
            b'Content-Length: %d\r\n\r\n' % len(AGGREGATE) + AGGREGATE))
        self.assertEqual(400, status)
        self.assertIn('HTTP/1.0', body['badRequest']['message'])
        self.assertEqual({'aggregates': []},
                         json.loads(self.list_aggregates()[1]))

    def test_an_unknown_transfer_coding_is_a_501_fault(self):
        status, body = _fault(self.exchange(
            CREATE_AGGREGATE + b'Transfer-Encoding: gzip, chunked\r\n\r\n'
            b'0\r\n\r\n'))
        self.assertEqual(501, status)
        self.assertEqual(501, body['notImplemented']['code'])

    def test_a_body_the_server_stops_reading_names_the_api_limit(self):
        # Over twice [wsgi] max_request_body_size the server refuses the
        # body before the API sees it; the fault names the API's limit,
        # carries a request id, and is one INFO line under that id.
        response = self.exchange(
            CREATE_AGGREGATE + b'Content-Length: 300000\r\n\r\n' +
            b'x' * 300000)
        head = response.partition(b'\r\n\r\n')[0].decode('latin-1')
        status, body = _fault(response)
        self.assertEqual(413, status)
        self.assertIn('larger than 114688 bytes',
                      body['overLimit']['message'])
        request_id = re.search(r'X-Openstack-Request-Id: (req-[-0-9a-f]+)',
                               head).group(1)
        self.assertEqual(1, self.server.output().count(request_id))
        self.assertIn('INFO nova_forcedown.wsgi.worker [None %s' % request_id,
                      self.server.output())
        self.assertNoTraceback()

    def test_a_client_gone_mid_body_changes_nothing(self):
        sock = self.connect()
        sock.sendall(DISABLE + b'Content-Length: 1000\r\n\r\n'
                     b'{"host": "x", "binary": "nova-compute"')
        sock.close()
        status, body = self.list_services()
        self.assertEqual(200, status)
        self.assertEqual({'services': []}, json.loads(body))
        self.assertNoTraceback()


class TestOtherProtocols(_ServerTestCase):
    """Clients that do not speak HTTP/1 are told at their first bytes.

    Their requests may never end a line: waiting for the headers would
    close them after client_socket_timeout with no answer at all.
    """

    # The start of a TLS 1.2 ClientHello: no line ever ends in it.
    CLIENT_HELLO = b'\x16\x03\x01\x02\x00\x01\x00\x01\xfc\x03\x03'

    def test_a_tls_client_is_answered_at_once_and_logged(self):
        status, body = _fault(self.exchange(self.CLIENT_HELLO))
        self.assertEqual(400, status)
        self.assertIn('TLS handshake', body['badRequest']['message'])
        processes.wait_until(lambda: 'use http://' in self.server.output())
        refusals = [line for line in self.server.output().splitlines()
                    if 'TLS handshake' in line]
        self.assertEqual(1, len(refusals), refusals)
        self.assertIn(' INFO ', refusals[0])
        self.assertNoTraceback()

    def test_bytes_no_method_starts_with_are_refused_at_once(self):
        status, body = _fault(self.exchange(b'\x00\xffGET'))
        self.assertEqual(400, status)
        self.assertEqual('Start line is invalid',
                         body['badRequest']['message'])

    def test_http2_is_a_505_fault(self):
        status, body = _fault(self.exchange(
            b'PRI * HTTP/2.0\r\n\r\nSM\r\n\r\n'))
        self.assertEqual(505, status)
        self.assertIn('HTTP/2.0 is not supported',
                      body['computeFault']['message'])

    def test_a_request_sent_a_byte_at_a_time_is_served(self):
        sock = self.connect()
        for byte in (b'\r\nGET /v2.1/os-services HTTP/1.1\r\nHost: t\r\n'
                     b'X-Auth-Token: admin:0123abcd\r\n'
                     b'Connection: close\r\n\r\n'):
            sock.sendall(bytes([byte]))
        response = _read_to_close(sock)
        self.assertTrue(response.startswith(b'HTTP/1.1 200 '), response)


class TestHostlessRequests(_ServerTestCase):

    def test_links_name_the_bound_address(self):
        response = self.exchange(b'GET /v2.1 HTTP/1.0\r\n\r\n')
        body = json.loads(response.partition(b'\r\n\r\n')[2])
        self.assertEqual('http://127.0.0.1:%d/v2.1/' % self.port,
                         body['version']['links'][0]['href'])


class TestServersSideBySide(testtools.TestCase):

    def test_each_server_owns_its_control_socket(self):
        home = self.useFixture(fixtures.TempDir()).path
        self.useFixture(fixtures.EnvironmentVariable('HOME', home))
        self.useFixture(fixtures.EnvironmentVariable('XDG_RUNTIME_DIR'))
        states = []
        for _ in range(2):
            state = self.useFixture(fixtures.TempDir()).path
            config = processes.write_config(
                state, '[DEFAULT]\nstate_path = %s\n' % state)
            port = processes.free_port()
            server = self.useFixture(processes.Process(
                [processes.script('nova-forcedown-api'), '--dev',
                 '--config-file', config, '--port', str(port)]))
            processes.wait_for_http('http://127.0.0.1:%d/' % port,
                                    process=server.process)
            states.append((state, port))
        for state, port in states:
            control = os.path.join(state, 'nova-forcedown-api-%d.ctl' % port)
            self.assertTrue(processes.wait_until(
                lambda: os.path.exists(control)), control)
        self.assertFalse(os.path.exists(os.path.join(home, '.gunicorn')))
