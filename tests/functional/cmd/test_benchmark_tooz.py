"""The tooz run of the benchmark keeps to a key namespace of its own.

Run as its users run it, ``python -m tools.benchmark``, briefly, on a
private Redis whose URL carries an option: the run names its namespace in
its figures and, when it ends, has left no key behind on the server.
"""

import json
import os
import sys

import fixtures
from oslotest import base

import nova_forcedown
from tests.fixtures import processes
from tests.fixtures import redis_servers

CHECKOUT = os.path.dirname(os.path.dirname(
    os.path.abspath(nova_forcedown.__file__)))

SHORT_RUN = ('--hosts=', '--tooz-hosts', '3', '--tooz-seconds', '1',
             '--tooz-agents', '1', '--tooz-processes', '1',
             '--tooz-force-downs', '1', '--tooz-quiet-listings', '1',
             '--tooz-report-interval', '1', '--tooz-service-down-time', '5',
             '--heartbeat-seconds', '1', '--heartbeat-processes', '1',
             '--heartbeat-threads', '1', '--workers', '1', '--threads', '2')


class TestToozRunNamespace(base.BaseTestCase):

    def test_a_run_leaves_no_key_behind(self):
        server = self.useFixture(redis_servers.RedisServer())
        output = os.path.join(self.useFixture(fixtures.TempDir()).path,
                              'figures.json')
        url = 'redis://127.0.0.1:%d?socket_timeout=5' % server.port
        result = processes.run(
            [sys.executable, '-m', 'tools.benchmark', *SHORT_RUN,
             '--tooz-url', url, '--json', output], cwd=CHECKOUT, timeout=240)
        self.assertEqual(0, result.returncode, result.stderr[-3000:])
        with open(output) as figures_file:
            figures = json.load(figures_file)
        self.assertTrue(figures['tooz']['namespace'].startswith('nf-bench-'))
        self.assertEqual([], server.client.keys('*'))
