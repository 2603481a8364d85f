"""nova-forcedown-status upgrade check, run as a process on a real SQLite."""

import json
import os
import subprocess
import sys

import fixtures
from oslotest import base

SUCCESS, WARNING, FAILURE = 0, 1, 2

SCHEMA = 'Database schema revision'
COLUMN = 'services.forced_down column'
POLICY = 'Policy file'


class TestUpgradeCheck(base.BaseTestCase):

    def setUp(self):
        super().setUp()
        self.tempdir = self.useFixture(fixtures.TempDir()).path
        self.policy_file = os.path.join(self.tempdir, 'policy.yaml')
        self.config_file = os.path.join(self.tempdir, 'nova_forcedown.conf')
        with open(self.config_file, 'w') as conf:
            conf.write('[DEFAULT]\n'
                       'state_path = %(dir)s\n'
                       '[database]\n'
                       'connection = sqlite:///%(dir)s/nova_forcedown.sqlite\n'
                       '[oslo_policy]\n'
                       'policy_file = %(policy)s\n'
                       % {'dir': self.tempdir, 'policy': self.policy_file})

    def _run(self, module, *args):
        return subprocess.run(
            [sys.executable, '-m', module, '--config-file', self.config_file,
             *args],
            capture_output=True, text=True, timeout=120)

    def _manage(self, *args):
        result = self._run('nova_forcedown.cmd.manage', 'db', 'sync', *args)
        self.assertEqual(0, result.returncode, result.stderr)

    def _check(self):
        """Exit code and {check name: result code} of a --json run."""
        result = self._run('nova_forcedown.cmd.status', 'upgrade', 'check',
                           '--json')
        report = json.loads(result.stdout.strip().splitlines()[-1])
        codes = {c['check']: c['result'] for c in report['checks']}
        return result.returncode, codes

    def test_a_database_away_fails_at_once(self):
        # Nothing listens on port 1. oslo.db alone retries MySQL for 100 s
        # per check; the checks answer within the connect timeout.
        with open(self.config_file, 'a') as conf:
            conf.write('[database]\n'
                       'connection = mysql+pymysql://root@127.0.0.1:1/nova\n')
        result = subprocess.run(
            [sys.executable, '-m', 'nova_forcedown.cmd.status',
             '--config-file', self.config_file, 'upgrade', 'check'],
            capture_output=True, text=True, timeout=30)
        self.assertEqual(FAILURE, result.returncode)
        self.assertIn('Connection refused', result.stdout)
        self.assertNotIn('Traceback', result.stdout + result.stderr)

    def test_empty_database_fails(self):
        code, checks = self._check()
        self.assertEqual(FAILURE, code)
        self.assertEqual({SCHEMA: FAILURE, COLUMN: FAILURE, POLICY: SUCCESS},
                         checks)

    def test_schema_before_forced_down_fails(self):
        self._manage('--revision', '0001_initial')
        code, checks = self._check()
        self.assertEqual(FAILURE, code)
        self.assertEqual(FAILURE, checks[SCHEMA])
        self.assertEqual(FAILURE, checks[COLUMN])

    def test_synced_database_succeeds(self):
        self.assertEqual(FAILURE, self._check()[0])
        self._manage()
        code, checks = self._check()
        self.assertEqual(SUCCESS, code)
        self.assertEqual({SCHEMA: SUCCESS, COLUMN: SUCCESS, POLICY: SUCCESS},
                         checks)

    def test_table_output_names_every_check(self):
        self._manage()
        result = self._run('nova_forcedown.cmd.status', 'upgrade', 'check')
        self.assertEqual(SUCCESS, result.returncode, result.stderr)
        for name in (SCHEMA, COLUMN, POLICY):
            self.assertIn('Check: %s' % name, result.stdout)

    def test_unknown_rule_in_policy_file_warns(self):
        self._manage()
        with open(self.policy_file, 'w') as policy:
            policy.write('"os_compute_api:os-services:list": '
                         '"role:admin or role:fencer"\n'
                         '"os_compute_api:os-service:update": "role:admin"\n')
        code, checks = self._check()
        self.assertEqual(WARNING, code)
        self.assertEqual(WARNING, checks[POLICY])

    def test_policy_file_with_undefined_rule_fails(self):
        self._manage()
        with open(self.policy_file, 'w') as policy:
            policy.write('"os_compute_api:os-services:list": '
                         '"rule:no_such_rule"\n')
        code, checks = self._check()
        self.assertEqual(FAILURE, code)
        self.assertEqual(FAILURE, checks[POLICY])

    def test_unparsable_policy_file_fails(self):
        self._manage()
        with open(self.policy_file, 'w') as policy:
            policy.write('{"os_compute_api:os-services:list": ')
        code, checks = self._check()
        self.assertEqual(FAILURE, code)
        self.assertEqual(FAILURE, checks[POLICY])

    def test_json_policy_file_is_accepted(self):
        self._manage()
        self.policy_file = os.path.join(self.tempdir, 'policy.json')
        with open(self.config_file, 'a') as conf:
            conf.write('policy_file = %s\n' % self.policy_file)
        with open(self.policy_file, 'w') as policy:
            policy.write('{"os_compute_api:os-services:update": '
                         '"role:admin or role:fencer"}')
        code, checks = self._check()
        self.assertEqual(SUCCESS, code)
        self.assertEqual(SUCCESS, checks[POLICY])
