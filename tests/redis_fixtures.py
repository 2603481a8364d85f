"""Real Redis for the tooz servicegroup driver's tests.

:class:`RedisNamespace` is a key namespace of its own on the Redis server
at 127.0.0.1:6379 (started by .ci/services), so tests running in parallel
never see each other's members; its keys are deleted afterwards.
:class:`RedisServer` is a private ``redis-server`` process on a free
loopback port, for a test that counts the server's commands or restarts
it empty. Without Redis, the tests skip, unless
NOVA_FORCEDOWN_REQUIRE_DATABASES is set (as CI does): then they fail.
"""

import os
import shutil
import unittest
import uuid

import fixtures
import redis

from tests import processes

SHARED_PORT = 6379


def _unavailable(reason):
    if os.environ.get('NOVA_FORCEDOWN_REQUIRE_DATABASES'):
        raise AssertionError(reason)
    raise unittest.SkipTest(reason)


def backend_url(port, namespace, **options):
    query = '&'.join('%s=%s' % item for item in
                     sorted(dict(options, namespace=namespace).items()))
    return 'redis://127.0.0.1:%d?%s' % (port, query)


class RedisNamespace(fixtures.Fixture):
    """``url``: the shared Redis with a namespace of this test's own."""

    def __init__(self, port=SHARED_PORT):
        super().__init__()
        self.port = port

    def _setUp(self):
        self.client = redis.Redis(host='127.0.0.1', port=self.port,
                                  socket_timeout=5)
        try:
            self.client.ping()
        except redis.RedisError as exc:
            _unavailable('Redis is not running at 127.0.0.1:%d: %s'
                         % (self.port, exc))
        self.namespace = 'nova-forcedown-test-' + uuid.uuid4().hex
        self.url = backend_url(self.port, self.namespace)
        self.addCleanup(self._delete_keys)

    def url_via(self, port, **options):
        """The same namespace, through another port (a proxy)."""
        return backend_url(port, self.namespace, **options)

    def _delete_keys(self):
        keys = list(self.client.scan_iter(self.namespace + '*'))
        if keys:
            self.client.delete(*keys)


class RedisServer(fixtures.Fixture):
    """A private, empty redis-server on a free loopback port."""

    def _setUp(self):
        binary = shutil.which('redis-server')
        if binary is None:
            _unavailable('redis-server is not installed')
        self.port = processes.free_port()
        self.start()
        self.client = redis.Redis(host='127.0.0.1', port=self.port,
                                  socket_timeout=5)

    def start(self):
        """Start (again: empty, as a restart without persistence)."""
        self.process = self.useFixture(processes.Process([
            shutil.which('redis-server'), '--port', str(self.port),
            '--bind', '127.0.0.1', '--save', '', '--appendonly', 'no']))
        client = redis.Redis(host='127.0.0.1', port=self.port,
                             socket_timeout=1)
        if not processes.wait_until(lambda: _pings(client), timeout=20):
            raise AssertionError('redis-server did not start: %s'
                                 % self.process.output())

    def stop(self):
        self.process.stop()

    def commands(self):
        """Commands the server has run so far (INFO included)."""
        stats = self.client.info('commandstats')
        return sum(entry['calls'] for entry in stats.values())


def _pings(client):
    try:
        return client.ping()
    except redis.RedisError:
        return False
