"""The real nova-forcedown-api process, started as an operator would."""

import json
import os
import signal
import socket
import subprocess
import sys

import fixtures
import psutil
import testtools

from tests.fixtures import processes

ADMIN = {'X-Auth-Token': 'admin:0123abcd'}


def _kill(processes_):
    for process in processes_:
        try:
            process.kill()
        except psutil.NoSuchProcess:
            pass


def _running(process):
    try:
        return process.status() != psutil.STATUS_ZOMBIE
    except psutil.NoSuchProcess:
        return False


class TestAPIServer(testtools.TestCase):

    def setUp(self):
        super().setUp()
        self.state = self.useFixture(fixtures.TempDir()).path
        self.config = processes.write_config(
            self.state, '[DEFAULT]\nstate_path = %s\n' % self.state)
        self.port = processes.free_port()
        self.base = 'http://127.0.0.1:%d' % self.port

    def _api(self, *args, env=None):
        return [processes.script('nova-forcedown-api'),
                '--config-file', self.config] + list(args)

    def _start_dev(self):
        server = self.useFixture(processes.Process(
            self._api('--dev', '--port', str(self.port))))
        processes.wait_for_http(self.base + '/', process=server.process)
        return server

    def test_dev_mode_serves_versions_and_services(self):
        server = self._start_dev()
        status, body = processes.http_get(self.base + '/')
        self.assertEqual(200, status)
        ids = [v['id'] for v in json.loads(body)['versions']]
        self.assertEqual(['v2.0', 'v2.1'], ids)
        status, body = processes.http_get(
            self.base + '/v2.1/os-services', ADMIN)
        self.assertEqual(200, status)
        self.assertEqual({'services': []}, json.loads(body))
        self.assertTrue(os.path.exists(
            os.path.join(self.state, 'nova_forcedown.sqlite')))
        self.assertIn('noauth2', server.output())
        self.assertIn('127.0.0.1:%d' % self.port, server.output())

    def test_dev_mode_starts_with_the_classic_flavors(self):
        server = self._start_dev()
        status, body = processes.http_get(self.base + '/v2.1/flavors/detail',
                                          ADMIN)
        self.assertEqual(200, status)
        self.assertEqual(
            [('1', 'm1.tiny', 512, 1, 1), ('2', 'm1.small', 2048, 1, 20),
             ('3', 'm1.medium', 4096, 2, 40), ('4', 'm1.large', 8192, 4, 80),
             ('5', 'm1.xlarge', 16384, 8, 160)],
            [(flavor['id'], flavor['name'], flavor['ram'], flavor['vcpus'],
              flavor['disk']) for flavor in json.loads(body)['flavors']])
        self.assertIn('flavors created: m1.tiny, m1.small', server.output())

    def test_dev_mode_leaves_existing_flavors_alone(self):
        manage = [processes.script('nova-forcedown-manage'),
                  '--config-file', self.config]
        for args in (['db', 'sync'],
                     ['flavor', 'create', 'mine', '--ram', '64', '--vcpus',
                      '1', '--disk', '0', '--id', '7']):
            result = processes.run(manage + args)
            self.assertEqual(0, result.returncode, result.stderr)
        server = self._start_dev()
        status, body = processes.http_get(self.base + '/v2.1/flavors',
                                          ADMIN)
        self.assertEqual(['mine'], [flavor['name'] for flavor in
                                    json.loads(body)['flavors']])
        self.assertNotIn('flavors created', server.output())

    def test_dev_mode_needs_a_token(self):
        self._start_dev()
        status, body = processes.http_get(self.base + '/v2.1/os-services')
        self.assertEqual(401, status)
        self.assertIn('unauthorized', json.loads(body))

    def test_sigterm_stops_cleanly(self):
        server = self._start_dev()
        server.process.send_signal(signal.SIGTERM)
        self.assertEqual(0, server.process.wait(15))
        self.assertNotIn('Traceback', server.output())

    def test_workers_stop_when_the_arbiter_is_killed(self):
        server = self._start_dev()
        workers = psutil.Process(server.process.pid).children()
        self.assertNotEqual([], workers)
        self.addCleanup(_kill, workers)
        server.process.kill()
        server.process.wait(15)
        # A worker looks for its parent about once a second.
        self.assertTrue(processes.wait_until(
            lambda: not any(_running(worker) for worker in workers)))

    def test_noauth2_refused_on_a_public_address(self):
        result = processes.run(self._api('--dev', '--host', '0.0.0.0',
                                         '--port', str(self.port)))
        self.assertEqual(1, result.returncode)
        self.assertIn('noauth2', result.stderr)
        self.assertNotIn('Traceback', result.stderr + result.stdout)

    def test_port_in_use_is_one_line_error(self):
        with socket.socket() as taken:
            taken.bind(('127.0.0.1', self.port))
            taken.listen()
            result = processes.run(self._api('--dev', '--port',
                                             str(self.port)))
        self.assertEqual(1, result.returncode)
        self.assertIn('cannot listen on 127.0.0.1:%d' % self.port,
                      result.stderr)
        self.assertNotIn('Traceback', result.stderr + result.stdout)

    def test_unmigrated_database_asks_for_db_sync(self):
        processes.write_config(self.state, (
            '[DEFAULT]\nstate_path = %s\n[api]\nauth_strategy = noauth2\n'
            % self.state))
        result = processes.run(self._api('--port', str(self.port)))
        self.assertEqual(1, result.returncode)
        self.assertIn('nova-forcedown-manage db sync', result.stderr)
        self.assertNotIn('Traceback', result.stderr + result.stdout)

    def test_invalid_option_value_names_the_option(self):
        processes.write_config(self.state, '[wsgi]\nworkers = many\n')
        result = processes.run(self._api('--dev', '--port', str(self.port)))
        self.assertEqual(2, result.returncode)
        self.assertIn('workers', result.stderr)
        self.assertNotIn('Traceback', result.stderr + result.stdout)


class TestWSGIApplication(testtools.TestCase):
    """nova_forcedown.wsgi.api:application under gunicorn, two workers."""

    def test_gunicorn_serves_the_application(self):
        self._serve_and_list([])

    def test_gunicorn_with_the_buffering_worker(self):
        self._serve_and_list(
            ['--worker-class', 'nova_forcedown.wsgi.worker.BufferingWorker',
             '--threads', '4'])

    def _serve_and_list(self, gunicorn_args):
        state = self.useFixture(fixtures.TempDir()).path
        config = processes.write_config(state, (
            '[DEFAULT]\nstate_path = %s\n[api]\nauth_strategy = noauth2\n'
            '[database]\nsync_on_startup = true\n' % state))
        port = processes.free_port()
        server = self.useFixture(processes.Process(
            [processes.script('gunicorn'), '--workers', '2',
             '--no-control-socket', '--bind', '127.0.0.1:%d' % port] +
            gunicorn_args + ['nova_forcedown.wsgi.api:application'],
            env={'NOVA_FORCEDOWN_CONFIG_FILE': config}))
        base = 'http://127.0.0.1:%d' % port
        processes.wait_for_http(base + '/', process=server.process)
        for _ in range(4):
            status, body = processes.http_get(
                base + '/v2.1/os-hypervisors', ADMIN)
            self.assertEqual(200, status, body)
            self.assertEqual({'hypervisors': []}, json.loads(body))


# Each process migrates at start, as a gunicorn worker does.
_MIGRATE_AT_START = (
    'import sys\n'
    'from nova_forcedown import conf\n'
    'from nova_forcedown.db import schema\n'
    'schema.prepare(conf.make_conf(["--config-file", sys.argv[1]], '
    'default_config_files=[]))\n')


class TestMigratingAtOnce(testtools.TestCase):
    """Workers of a fresh database migrate it at the same moment.

    Without the lock schema.sync_on_startup takes, about one run in two
    of four processes has one fail: both read an empty schema.
    """

    def test_every_process_starts_and_the_schema_is_made_once(self):
        state = self.useFixture(fixtures.TempDir()).path
        config = processes.write_config(state, (
            '[DEFAULT]\nstate_path = %s\n[database]\nsync_on_startup = true\n'
            % state))
        starting = [subprocess.Popen(
            [sys.executable, '-c', _MIGRATE_AT_START, config],
            stdout=subprocess.PIPE, stderr=subprocess.STDOUT)
            for _ in range(4)]

        outputs = [process.communicate(timeout=120)[0]
                   for process in starting]

        self.assertEqual([0] * 4,
                         [process.returncode for process in starting],
                         b'\n'.join(outputs).decode('utf-8', 'replace'))
