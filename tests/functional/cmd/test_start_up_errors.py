"""What the commands say when they cannot start: one line that says what
to do, a non-zero exit, never a traceback.

Each runs as a real process, as an operator runs it. A missing database
driver is a package on the path whose import fails, as it fails where the
driver is not installed.
"""

import json
import os
import tempfile

import fixtures
from oslotest import base

from tests.fixtures import commands
from tests.fixtures import processes

SCRIPTS = ('nova-forcedown-api', 'nova-forcedown-compute',
           'nova-forcedown-manage')
# A driver that is not there: importing it fails as a missing module does.
_MISSING_MODULE = ("raise ModuleNotFoundError(\"No module named '%s'\", "
                   "name='%s')\n")


class StartUpErrorTestCase(base.BaseTestCase):

    def setUp(self):
        super().setUp()
        self.directory = self.useFixture(fixtures.TempDir()).path
        self.home = {'HOME': self.directory}

    def config(self, text):
        return processes.write_config(self.directory, text)

    def run_script(self, name, *argv, env=None):
        return processes.run([processes.script(name), *argv],
                             env=dict(self.home, **(env or {})))

    def assertOneLine(self, result, *expected):
        self.assertNotEqual(0, result.returncode)
        self.assertNotIn('Traceback', result.stdout + result.stderr)
        lines = [line for line in result.stderr.splitlines()
                 if not line.startswith('20')]
        self.assertEqual(1, len(lines), result.stderr)
        for text in expected:
            self.assertIn(text, lines[0])


class TestHelp(StartUpErrorTestCase):

    def test_every_command_says_what_it_does(self):
        for name, words in (('nova-forcedown-api', 'compute API'),
                            ('nova-forcedown-compute', 'heartbeat'),
                            ('nova-forcedown-manage', 'Administer'),
                            ('nova-forcedown-status', 'ready'),
                            ('nova-forcedown-monitor', 'compute API'),
                            ('nova-forcedown-pulse', 'pulse')):
            result = self.run_script(name, '--help')
            self.assertEqual(0, result.returncode, result.stderr)
            self.assertIn(words, result.stdout, name)

    def test_api_help_shows_its_server_options(self):
        result = self.run_script('nova-forcedown-api', '--help')
        for option in ('--dev', '--host ADDR', '--port PORT',
                       '--config-file'):
            self.assertIn(option, result.stdout)
        self.assertEqual(1, result.stdout.count('usage:'), result.stdout)

    def test_help_opens_with_usage_and_an_example_not_logging(self):
        for name in ('nova-forcedown-manage', 'nova-forcedown-monitor',
                     'nova-forcedown-pulse', 'nova-forcedown-status'):
            opening = self.run_script(name, '--help').stdout.splitlines()[:3]
            self.assertTrue(opening[0].startswith('usage: %s [--config-file '
                                                  'PATH]...' % name), opening)
            self.assertTrue(opening[1].startswith('example: %s --config-'
                                                  'file /etc/' % name),
                            opening)
            self.assertNotIn('--log', '\n'.join(opening))

    def test_an_unknown_driver_lists_the_installed_ones(self):
        result = self.run_script('nova-forcedown-compute', '--driver',
                                 'libvirt')
        self.assertOneLine(result, "unknown driver 'libvirt'",
                           '--driver takes one of fake, local')


class TestPulseSettings(StartUpErrorTestCase):
    """The pulse refuses what could never work, before it joins."""

    def test_a_ttl_not_above_the_interval_is_refused(self):
        for interval in ('2', '2.5'):
            config = self.config('[pulse]\ninterval = %s\nttl = 2\n'
                                 % interval)
            result = self.run_script('nova-forcedown-pulse',
                                     '--config-file', config)
            self.assertOneLine(
                result, '[pulse] ttl (2 s) must be larger than [pulse] '
                'interval (%s s)' % interval)
            self.assertEqual(2, result.returncode)

    def test_a_backend_tooz_does_not_know_is_refused(self):
        config = self.config('[coordination]\n'
                             'backend_url = nosuch://127.0.0.1:1\n')
        result = self.run_script('nova-forcedown-pulse', '--config-file',
                                 config)
        self.assertOneLine(result, '[coordination] backend_url '
                           'nosuch://127.0.0.1:1 is not valid',
                           'tooz has no backend "nosuch" (it knows ',
                           'redis')
        self.assertEqual(2, result.returncode)


class TestLivenessBackendOfTheAPI(StartUpErrorTestCase):
    """With the tooz driver, the API checks its backend as it starts."""

    def _config(self, url):
        return self.config('[DEFAULT]\nservicegroup_driver = tooz\n'
                           'state_path = %s\n[database]\nsync_on_startup = '
                           'true\n[api]\nauth_strategy = '
                           'noauth2\n[coordination]\nbackend_url = %s\n'
                           % (self.directory, url))

    def test_a_backend_tooz_does_not_know_is_refused(self):
        result = self.run_script('nova-forcedown-api', '--config-file',
                                 self._config('nosuch://127.0.0.1:1'),
                                 '--port', '0')
        self.assertOneLine(result, '[coordination] backend_url '
                           'nosuch://127.0.0.1:1 is not valid')
        self.assertEqual(2, result.returncode)

    def test_a_backend_away_is_said_once_and_the_api_serves(self):
        port = processes.free_port()
        api = self.useFixture(processes.Process([
            processes.script('nova-forcedown-api'), '--config-file',
            self._config('redis://127.0.0.1:1'), '--port', str(port)],
            env=self.home))
        processes.wait_for_http('http://127.0.0.1:%d/' % port,
                                process=api.process)
        said = [line for line in api.output().splitlines()
                if 'WARNING' in line or 'ERROR' in line]
        self.assertEqual(1, len(said), api.output())
        self.assertIn('The coordination backend at redis://127.0.0.1:1 '
                      'does not answer', said[0])


class TestKeystoneSettings(StartUpErrorTestCase):

    def test_keystone_auth_without_its_settings_does_not_start(self):
        # No config at all and no --dev: Keystone auth, with nothing to
        # validate tokens with.
        result = self.run_script('nova-forcedown-api', '--port', '1')
        self.assertOneLine(
            result, 'auth_strategy is keystone',
            '[keystone_authtoken] has no www_authenticate_uri and no '
            'auth_type', '--dev')

    def test_an_auth_plugin_without_its_options_does_not_start(self):
        config = self.config(
            '[keystone_authtoken]\n'
            'www_authenticate_uri = http://127.0.0.1:5000/v3\n'
            'auth_type = password\n')
        result = self.run_script('nova-forcedown-api', '--config-file',
                                 config, '--port', '1')
        self.assertOneLine(result, 'auth_type password',
                           'not given: auth_url')


class TestDatabaseAway(StartUpErrorTestCase):
    """Nothing listens on port 1: each backend is refused at once.

    oslo.db alone would retry MySQL for 100 s and PostgreSQL not at all;
    both now stop after one try (processes.run gives up after 60 s).
    """

    def _check(self, url):
        config = self.config('[api]\nauth_strategy = noauth2\n'
                             '[database]\nconnection = %s\n' % url)
        for argv in (('nova-forcedown-api', '--port', '0'),
                     ('nova-forcedown-manage', 'db', 'version')):
            result = self.run_script(argv[0], '--config-file', config,
                                     *argv[1:])
            self.assertOneLine(result, 'cannot use the database at',
                               'Connection refused')

    def test_mysql(self):
        self._check('mysql+pymysql://root@127.0.0.1:1/nova')

    def test_postgresql(self):
        self._check('postgresql+psycopg://postgres@127.0.0.1:1/nova')

    def test_postgresql_psycopg2(self):
        self._check('postgresql+psycopg2://postgres@127.0.0.1:1/nova')


class TestMissingDatabaseDriver(StartUpErrorTestCase):

    def _without(self, module):
        path = os.path.join(tempfile.mkdtemp(dir=self.directory), module)
        os.makedirs(path)
        with open(os.path.join(path, '__init__.py'), 'w') as init:
            init.write(_MISSING_MODULE % (module, module))
        return {'PYTHONPATH': os.path.dirname(path)}

    def _check(self, url, module, advice):
        config = self.config('[api]\nauth_strategy = noauth2\n'
                             '[database]\nconnection = %s\n' % url)
        env = self._without(module)
        for name in SCRIPTS:
            argv = ['--config-file', config]
            if name == 'nova-forcedown-manage':
                argv += ['db', 'version']
            elif name == 'nova-forcedown-api':
                argv += ['--port', '0']
            result = self.run_script(name, *argv, env=env)
            self.assertOneLine(result, advice, module)

    def test_postgresql_names_its_extra(self):
        # psycopg 3 is SQLAlchemy's default driver of postgresql://; the
        # extra also brings psycopg2, for URLs written before.
        for url, module in (
                ('postgresql+psycopg://nova@127.0.0.1/nova', 'psycopg'),
                ('postgresql://nova@127.0.0.1/nova', 'psycopg'),
                ('postgresql+psycopg2://nova@127.0.0.1/nova', 'psycopg2')):
            self._check(url, module,
                        "pip install 'nova-forcedown[postgresql]'")

    def test_mysql_names_its_extra(self):
        self._check('mysql+pymysql://nova@127.0.0.1/nova', 'pymysql',
                    "pip install 'nova-forcedown[mysql]'")

    def test_status_reports_it_as_a_failed_check(self):
        config = self.config('[database]\nconnection = '
                             'mysql+pymysql://nova@127.0.0.1/nova\n')
        result = self.run_script(
            'nova-forcedown-status', '--config-file', config, 'upgrade',
            'check', '--json', env=self._without('pymysql'))
        self.assertEqual(2, result.returncode)
        self.assertNotIn('Traceback', result.stdout + result.stderr)
        report = json.loads(result.stdout.splitlines()[-1])
        failed = [check['details'] for check in report['checks']
                  if check['result'] == 2]
        self.assertEqual(2, len(failed), report)
        for details in failed:
            self.assertIn("pip install 'nova-forcedown[mysql]'", details)

    def test_a_driver_not_of_an_extra_is_told_to_name_ours(self):
        # Installing the extra would not help: it does not bring these
        # (mysqlclient is SQLAlchemy's default driver of mysql://).
        for url, module, ours in (
                ('mysql://nova@127.0.0.1/nova', 'MySQLdb',
                 'mysql+pymysql://'),
                ('postgresql+pg8000://nova@127.0.0.1/nova', 'pg8000',
                 'postgresql+psycopg://')):
            self._check(url, module, ours)


class TestMalformedDatabaseURL(StartUpErrorTestCase):
    """A connection that is not a URL, or names no database SQLAlchemy has.

    Each command names the option and what to write, in one line.
    """

    def _check(self, url, said):
        config = self.config('[api]\nauth_strategy = noauth2\n'
                             '[database]\nconnection = %s\n' % url)
        for argv in (('nova-forcedown-api', '--port', '0'),
                     ('nova-forcedown-manage', 'db', 'version')):
            result = self.run_script(argv[0], '--config-file', config,
                                     *argv[1:])
            self.assertOneLine(result, '[database] connection', said)
            self.assertNotIn('hunter2', result.stderr)
        result = self.run_script('nova-forcedown-status', '--config-file',
                                 config, 'upgrade', 'check', '--json')
        self.assertEqual(2, result.returncode)
        self.assertNotIn('Traceback', result.stdout + result.stderr)
        self.assertIn(said, result.stdout)

    def test_not_a_url(self):
        for url in ('sqlite:nf.db', '127.0.0.1/nf'):
            self._check(url, 'is not a database URL')

    def test_a_scheme_sqlalchemy_does_not_know(self):
        self._check('postgres://nova:hunter2@127.0.0.1/nf',
                    'SQLAlchemy knows no database postgres://')


class TestPolicyFile(StartUpErrorTestCase):
    """A policy file the API cannot use stops it at start, in one line.

    oslo.policy would read it at the first request and answer every
    request 500, logging a traceback and naming no file.
    """

    def _refused(self, rules, said):
        path = os.path.join(self.directory, 'policy.yaml')
        with open(path, 'w') as policy_file:
            policy_file.write(rules)
        config = self.config('[api]\nauth_strategy = noauth2\n'
                             '[oslo_policy]\npolicy_file = %s\n' % path)
        result = self.run_script('nova-forcedown-api', '--config-file',
                                 config, '--port', '0')
        self.assertOneLine(result, 'policy file %s cannot be used' % path,
                           said)

    def test_yaml_that_does_not_parse(self):
        self._refused('os_compute_api:os-services:list: [\n',
                      'expected the node content')

    def test_a_rule_that_does_not_parse(self):
        self._refused('os_compute_api:os-services:list: "role:admin or"\n',
                      'these rules cannot be parsed')


class TestSchemaOfANewerRelease(StartUpErrorTestCase):
    """A newer release ran db sync; this one is still installed here.

    Nothing it runs can help (db sync never goes back): every command says
    to upgrade this host's nova-forcedown, at once, and writes nothing.
    """

    FUTURE = '0099_of_a_newer_release'

    def setUp(self):
        super().setUp()
        self.database = self.useFixture(commands.DatabaseFile())
        with open(self.database.config_file, 'a') as config:
            config.write('max_retries = 30\nretry_interval = 1\n'
                         '[api]\nauth_strategy = noauth2\n')
        self.database.execute('UPDATE alembic_version SET version_num = ?',
                              self.FUTURE)

    def test_every_command_says_to_upgrade_this_host(self):
        config = self.database.config_file
        for argv in (('nova-forcedown-api', '--port', '0'),
                     ('nova-forcedown-compute', '--driver', 'fake'),
                     ('nova-forcedown-manage', 'db', 'sync'),
                     ('nova-forcedown-manage', 'service', 'list')):
            result = self.run_script(argv[0], '--config-file', config,
                                     *argv[1:])
            self.assertOneLine(
                result, 'at revision %s, which this release of '
                'nova-forcedown does not know' % self.FUTURE,
                'Upgrade nova-forcedown here')
        self.assertEqual([{'version_num': self.FUTURE}], self.database.query(
            'SELECT version_num FROM alembic_version'))
        self.assertEqual([], self.database.query('SELECT id FROM services'))

    def test_status_fails_its_schema_check(self):
        result = self.run_script(
            'nova-forcedown-status', '--config-file',
            self.database.config_file, 'upgrade', 'check', '--json')
        self.assertEqual(2, result.returncode, result.stderr)
        report = json.loads(result.stdout.splitlines()[-1])
        self.assertIn('Upgrade nova-forcedown here', report['checks'][0][
            'details'])


class TestUnknownTargetRevision(StartUpErrorTestCase):

    def test_db_sync_to_a_revision_that_does_not_exist(self):
        database = self.useFixture(commands.DatabaseFile(migrate=False))
        result = self.run_script('nova-forcedown-manage', '--config-file',
                                 database.config_file, 'db', 'sync',
                                 '--revision', '0099_typo')
        self.assertOneLine(result, 'Cannot migrate the database to '
                                   "0099_typo: Can't locate revision")
