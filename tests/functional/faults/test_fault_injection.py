"""The fault-injection tool, in its short form, finds nothing wrong.

``python -m tools.fault_injection`` runs as a command from the checkout
(tests never import tools/): real agents, one per simulated host, are
killed and restarted, hosts are fenced, evacuated in storms and repaired,
destinations die mid-rebuild, servers are created and deleted, and on
PostgreSQL the database, Redis (the tooz driver) and RabbitMQ (the tasks
cast to the agents) are cut, while the tool checks that no server runs
on two hosts, none is lost, none is created on a host forced down all
along its create, no host is over capacity, every answer is a 2xx, a
4xx or a clean 503 during a cut of the database or Redis, and that every
evacuation, build and delete ends: every server ACTIVE (or stopped by
its evacuation) or in ERROR with a fault, every deleted server gone.
Each run is 45 seconds of storm and faults, so that CI stays short.
"""

import json
import os
import subprocess
import sys

from oslo_db import exception as db_exc
from oslo_db.sqlalchemy import provision
import testtools
from testtools import content

from tests.fixtures import rabbitmq
from tests.fixtures import redis_servers

# tests/functional/faults/ is three levels below the checkout.
CHECKOUT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.dirname(
    os.path.abspath(__file__)))))
DURATION = 45
# The run's bound: start-up, the storm, the final recovery and slack for
# two busy cores.
TIMEOUT = DURATION + 240


class TestFaultInjection(testtools.TestCase):

    def _run(self, *options):
        command = [sys.executable, '-m', 'tools.fault_injection',
                   '--duration', str(DURATION), '--hosts', '6',
                   '--clients', '8', '--seed', self.id(),
                   '--json', *options]
        result = subprocess.run(command, cwd=CHECKOUT, capture_output=True,
                                timeout=TIMEOUT, stdin=subprocess.DEVNULL)
        self.addDetail('report', content.text_content(
            result.stderr.decode('utf-8', 'replace')[-20000:]))
        self.assertEqual(0, result.returncode)
        figures = json.loads(result.stdout)
        self.assertEqual(0, figures['violation_count'],
                         figures['violations'])
        return figures

    def _assert_exercised(self, figures):
        """The faults happened, and the clients' requests with them.

        Evacuations were accepted and ended, servers were created (some
        while a host was forced down) and deleted.
        """
        faults = figures['faults']
        for kind in ('crash', 'fence', 'repair'):
            self.assertGreater(faults.get(kind, 0), 0, faults)
        self.assertGreater(sum(figures['evacuations_accepted'].values()), 0)
        self.assertEqual(figures['final']['servers_of_the_start'], 6 * 3)
        self.assertGreater(sum(figures['creates_accepted'].values()), 0)
        self.assertGreater(figures['creates_judged'], 0)
        self.assertGreater(figures['deletes_answered'].get('204', 0), 0)

    def test_sqlite(self):
        figures = self._run()
        self.assertEqual('sqlite', figures['backend'])
        self._assert_exercised(figures)

    def test_postgresql_tooz_rabbitmq(self):
        rabbitmq.require_broker(self)
        try:
            backend = provision.Backend.backend_for_database_type(
                'postgresql')
        except db_exc.BackendNotAvailable as exc:
            if os.environ.get('NOVA_FORCEDOWN_REQUIRE_DATABASES'):
                raise
            self.skipTest(str(exc))
        self.useFixture(redis_servers.RedisNamespace())
        figures = self._run('--db-url', backend.url.render_as_string(
            hide_password=False), '--coordination', 'redis',
            '--messaging', 'rabbit')
        self.assertEqual('postgresql', figures['backend'])
        self._assert_exercised(figures)
        cuts = sum(count for kind, count in figures['faults'].items()
                   if kind.endswith(('-reset', '-blackhole')))
        self.assertGreater(cuts, 0, figures['faults'])
