"""HAProxy in front of API servers on loopback, as a test fixture.

:class:`HAProxy` writes a configuration (one HTTP frontend on a free
loopback port, one backend of the given servers with health checks on
/healthcheck, retries and redispatch, an admin socket) and runs the
``haproxy`` of Debian's package in the foreground, never the system
service. Tests skip when haproxy is not installed, unless
``NOVA_FORCEDOWN_REQUIRE_HAPROXY`` is set (CI sets it and installs it).
"""

import csv
import os
import shutil
import socket
import time

import fixtures
import testtools

from tests import processes

REQUIRE_VARIABLE = 'NOVA_FORCEDOWN_REQUIRE_HAPROXY'

# Where Debian installs it; root's PATH has it, other users' may not.
_SEARCH_PATH = os.pathsep.join([os.environ.get('PATH', ''), '/usr/sbin',
                                '/usr/local/sbin', '/sbin'])

# Health checks every CHECK_INTERVAL_MS; FALL failed checks take a server
# out, RISE good ones put it back. A connection error seen by live traffic
# takes it out at once (observe layer4).
CHECK_INTERVAL_MS = 500
FALL = 2
RISE = 2

_CONFIG = """global
    maxconn 2000
    stats socket %(socket)s mode 600 level admin
    log stdout format raw local0 info

defaults
    mode http
    log global
    option httplog
    timeout connect 1s
    timeout client 30s
    timeout server 30s
    timeout http-keep-alive 10s
    # A request that failed on one server is tried again, each time on
    # another one (the whole request is buffered first, or haproxy cannot
    # replay a request body); POST (a server action) and DELETE only when
    # they were never sent.
    retries 3
    option redispatch 1
    retry-on conn-failure empty-response
    option http-buffer-request

frontend compute_api
    bind 127.0.0.1:%(port)d
    default_backend nova_forcedown_api

backend nova_forcedown_api
    balance roundrobin
    option httpchk
    http-check send meth GET uri /healthcheck
    http-check expect status 200
    http-request disable-l7-retry if METH_POST || METH_DELETE
    default-server inter %(inter)dms fastinter %(inter)dms \
fall %(fall)d rise %(rise)d observe layer4 error-limit 1 on-error mark-down
%(servers)s
"""


def haproxy_binary():
    """The haproxy executable; skips, or fails where it is required."""
    path = shutil.which('haproxy', path=_SEARCH_PATH)
    if path is None:
        message = ('haproxy is not installed (apt-get install haproxy); '
                   'the scale-out tests need it')
        if os.environ.get(REQUIRE_VARIABLE):
            raise AssertionError(message)
        raise testtools.TestCase.skipException(message)
    return path


def server_name(index):
    return 'node%d' % index


class HAProxy(fixtures.Fixture):
    """haproxy balancing loopback ``server_ports``; ``port`` is its own."""

    def __init__(self, server_ports):
        super().__init__()
        self.server_ports = list(server_ports)

    def _setUp(self):
        binary = haproxy_binary()
        directory = self.useFixture(fixtures.TempDir()).path
        self.port = processes.free_port()
        self.socket_path = os.path.join(directory, 'admin.sock')
        self.config_file = os.path.join(directory, 'haproxy.cfg')
        with open(self.config_file, 'w') as config:
            config.write(self.config_text())
        checked = processes.run([binary, '-c', '-f', self.config_file])
        if checked.returncode:
            raise AssertionError('haproxy refuses its configuration:\n%s%s'
                                 % (checked.stdout, checked.stderr))
        # -db: stay in the foreground, as one process the fixture stops.
        self.process = self.useFixture(processes.Process(
            [binary, '-db', '-f', self.config_file]))
        processes.wait_for_http('http://127.0.0.1:%d/' % self.port,
                                process=self.process.process)

    def config_text(self):
        servers = '\n'.join(
            '    server %s 127.0.0.1:%d check' % (server_name(index), port)
            for index, port in enumerate(self.server_ports))
        return _CONFIG % {'socket': self.socket_path, 'port': self.port,
                          'inter': CHECK_INTERVAL_MS, 'fall': FALL,
                          'rise': RISE, 'servers': servers}

    # ------------------------------------------------------ admin socket

    def command(self, text):
        """The answer of the admin socket to one command."""
        with socket.socket(socket.AF_UNIX, socket.SOCK_STREAM) as admin:
            admin.settimeout(5)
            admin.connect(self.socket_path)
            admin.sendall(text.encode() + b'\n')
            chunks = []
            while True:
                chunk = admin.recv(65536)
                if not chunk:
                    break
                chunks.append(chunk)
        return b''.join(chunks).decode()

    def servers(self):
        """``show stat`` of the backend's servers: name -> row of strings.

        Among the columns: ``status`` (UP, DOWN, ...), ``check_status``,
        ``stot`` (requests sent), ``wretr`` (retries), ``wredis``
        (redispatches), ``econ`` and ``eresp`` (connection and response
        errors).
        """
        text = self.command('show stat').lstrip('# ')
        return {row['svname']: row for row in csv.DictReader(
            text.splitlines())
            if row['pxname'] == 'nova_forcedown_api' and
            row['svname'] not in ('FRONTEND', 'BACKEND')}

    def status(self):
        """name -> UP or DOWN (transitions included: 'UP 1/2')."""
        return {name: row['status'] for name, row in self.servers().items()}

    def wait_for_status(self, expected, timeout=30):
        """Wait until every server named in ``expected`` is in that state.

        A server counts as UP only once a health check has passed.
        """
        def reached():
            servers = self.servers()
            for name, state in expected.items():
                row = servers[name]
                if row['status'] != state:
                    return False
                if state == 'UP' and row['check_status'] != 'L7OK':
                    return False
            return True

        start = time.monotonic()
        if not processes.wait_until(reached, timeout=timeout):
            raise AssertionError('haproxy servers %r, expected %r'
                                 % (self.status(), expected))
        return time.monotonic() - start
