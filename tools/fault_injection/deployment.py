"""The processes under test: the API and one agent per simulated host.

Each is a real console entry point (``nova-forcedown-api``,
``nova-forcedown-compute --driver fake``) started from one configuration
file whose database (and Redis, and RabbitMQ) URL names a
:class:`proxy.Relay`, so the fault injector can take them away. The tool
itself reads the database directly, never through a relay.
"""

import os
import signal
import subprocess
import sys
import time

import redis
import sqlalchemy as sa

from tests.fixtures import rabbitmq
from tools.benchmark import seeding
from tools.benchmark import server as bench_server
from tools.fault_injection import proxy

CHECKOUT = bench_server.CHECKOUT
BIN_DIR = os.path.dirname(sys.executable)
DEFAULT_PORTS = {'postgresql': 5432, 'mysql': 3306}
# Driver settings that bound a connection attempt and a read through a
# cut relay, so an API request ends in a 503 rather than a hang.
CONNECTION_PARAMETERS = {
    'postgresql': 'connect_timeout=2',
    'mysql': 'connect_timeout=2&read_timeout=10&write_timeout=10',
}
REDIS_PORT = 6379
# The relay of the broker: a request never waits for it, so its cut
# excuses no failed answer.
BROKER = 'rabbit'

_CONFIG = """[DEFAULT]
state_path = %(state)s
report_interval = 1
service_down_time = %(down_time)d
task_poll_interval = 0.5
# The final check expects each server's power state to be its host's.
sync_power_state_interval = 1
%(servicegroup)s%(transport)s
[api]
auth_strategy = noauth2

[wsgi]
host = 127.0.0.1
workers = 2
threads = 8

[database]
connection = %(connection)s
# An agent restarted during a cut waits for the database, however long.
max_retries = -1
retry_interval = 1
%(database_extra)s
%(coordination)s
"""


class Deployment:
    """A fresh database, its relays and the configuration file."""

    def __init__(self, db_url, coordination, down_time, messaging=None):
        self.database = seeding.Database(db_url)
        self.directory = self.database.directory
        self.state_dir = os.path.join(self.directory, 'hosts')
        os.makedirs(self.state_dir)
        self.engine = sa.create_engine(self.database.url,
                                       poolclass=sa.pool.NullPool)
        self.relays = {}
        backend = self.database.backend
        connection = self.database.url
        extra = ''
        if backend != 'sqlite':
            self.relays['database'] = proxy.Relay(
                connection.port or DEFAULT_PORTS[backend], 'database')
            connection = connection.set(host='127.0.0.1',
                                        port=self.relays['database'].port)
            extra = 'pool_timeout = 3\nconnection_parameters = %s\n' % (
                CONNECTION_PARAMETERS.get(backend, ''))
        servicegroup = coordination_section = ''
        self.namespace = None
        if coordination == 'redis':
            self.relays['redis'] = proxy.Relay(REDIS_PORT, 'redis')
            self.namespace = 'fi_' + os.path.basename(
                self.directory).replace('-', '_')
            servicegroup = 'servicegroup_driver = tooz\n'
            # The database heartbeat also finds the tasks whose cast was
            # lost; by default it comes every service_down_time / 2,
            # 300 s here, longer than the final recovery waits.
            coordination_section = (
                '[coordination]\nbackend_url = redis://127.0.0.1:%d'
                '?namespace=%s&timeout=2\ndatabase_report_interval = 5\n'
                % (self.relays['redis'].port, self.namespace))
        transport = self._transport(messaging)
        self.config = os.path.join(self.directory, 'nova_forcedown.conf')
        with open(self.config, 'w') as config:
            config.write(_CONFIG % {
                'state': self.directory, 'down_time': down_time,
                'servicegroup': servicegroup, 'transport': transport,
                'connection': connection.render_as_string(
                    hide_password=False).replace('%', '%%'),
                'database_extra': extra,
                'coordination': coordination_section})

    def _transport(self, messaging):
        """The ``transport_url`` line: a virtual host of the run's own.

        Its agents' queues (``compute.fi1-1``...) are then the run's
        alone, whatever else uses the broker.
        """
        self.virtual_host = None
        if messaging != 'rabbit':
            return ''
        self.virtual_host = rabbitmq.VirtualHost()
        self.virtual_host.setUp()
        self.relays[BROKER] = proxy.Relay(rabbitmq.BROKER[1], BROKER)
        return 'transport_url = %s\n' % self.virtual_host.url(
            self.relays[BROKER].port)

    @property
    def backend(self):
        return self.database.backend

    def close(self):
        for relay in self.relays.values():
            relay.close()
        self.engine.dispose()
        self.database.drop()
        if self.virtual_host is not None:
            self.virtual_host.cleanUp()
        if self.namespace is not None:
            backend = redis.Redis(host='127.0.0.1', port=REDIS_PORT,
                                  socket_timeout=5)
            keys = list(backend.scan_iter(self.namespace + '*'))
            if keys:
                backend.delete(*keys)
            backend.close()


class Process:
    """A console command that can be started, killed and started again."""

    def __init__(self, name, command, directory):
        self.name = name
        self.command = command
        self.log_path = os.path.join(directory, name + '.log')
        self.process = None
        self.starts = 0
        self._offset = 0

    def start(self):
        with open(self.log_path, 'ab') as log:
            self._offset = log.tell()
            self.process = subprocess.Popen(
                self.command, cwd=CHECKOUT, stdout=log,
                stderr=subprocess.STDOUT, stdin=subprocess.DEVNULL)
        self.starts += 1

    @property
    def alive(self):
        return self.process is not None and self.process.poll() is None

    def output(self):
        """What it wrote since its last start."""
        with open(self.log_path, 'rb') as log:
            log.seek(self._offset)
            return log.read().decode('utf-8', 'replace')

    def kill(self):
        """SIGKILL, as a crash or a fence does; wait for it to be gone."""
        if self.alive:
            self.process.send_signal(signal.SIGKILL)
        if self.process is not None:
            self.process.wait()

    def terminate(self):
        """SIGTERM, without waiting (:meth:`stop` waits)."""
        if self.alive:
            self.process.terminate()

    def stop(self, timeout=20):
        if self.alive:
            self.process.terminate()
            try:
                self.process.wait(timeout)
            except subprocess.TimeoutExpired:
                self.kill()


class Api(Process):

    def __init__(self, deployment):
        self.port = bench_server.free_port()
        super().__init__('api', [
            os.path.join(BIN_DIR, 'nova-forcedown-api'), '--config-file',
            deployment.config, '--port', str(self.port)],
            deployment.directory)


class Agent(Process):
    """The agent of one simulated host, ``<prefix>1``."""

    # What the agent logs once it has cleaned up, registered and started
    # heartbeating.
    READY = 'Heartbeating'

    def __init__(self, deployment, index, instances, flavor):
        prefix = 'fi%d-' % index
        self.host = prefix + '1'
        self.state_file = os.path.join(deployment.state_dir,
                                       self.host + '.json')
        super().__init__('agent-' + self.host, [
            sys.executable, '-m', 'nova_forcedown.cmd.compute',
            '--config-file', deployment.config, '--driver', 'fake',
            '--hosts', '1', '--host-prefix', prefix, '--instances',
            str(instances), '--flavor', flavor, '--state-dir',
            deployment.state_dir], deployment.directory)

    def start_ready(self, timeout=90):
        """Start it and wait until it heartbeats; the attempts it took.

        An agent that cannot reach the database at start exits: it is
        started again, as a supervisor would.
        """
        deadline = time.monotonic() + timeout
        attempts = 0
        while time.monotonic() < deadline:
            attempts += 1
            self.start()
            while self.alive and time.monotonic() < deadline:
                if self.READY in self.output():
                    return attempts
                time.sleep(0.1)
            if not self.alive:
                time.sleep(1)
        self.kill()
        raise RuntimeError('agent of %s not ready after %d s:\n%s' % (
            self.host, timeout, self.output()[-3000:]))
