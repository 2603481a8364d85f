"""Service, aggregate and instance notifications through the real RabbitMQ
on 127.0.0.1:5672.

The real API server and heartbeat agent run with versioned notifications on
a topic of their own per test; the test reads a private copy of what reaches
the broker with kombu, as any consumer would, and checks the oslo.messaging
envelope and Nova's payload. A build that fails on a hypervisor is run in
this process (no agent's driver fails on demand), sending through the same
broker. Skipped when no broker listens there, unless
NOVA_FORCEDOWN_REQUIRE_RABBITMQ is set (then it fails).
"""

import collections
import json
import os
import signal
import socket
import time
import urllib.request
import uuid

import kombu
import oslo_messaging
import testtools

from nova_forcedown import notifications
from tests.fixtures import commands
from tests.fixtures import databases
from tests.fixtures import processes
from tests.fixtures import rabbitmq
from tests.functional.db import test_server_build as server_build

BROKER = ('127.0.0.1', 5672)
AMQP_URL = 'amqp://guest:guest@127.0.0.1:5672//'
EXCHANGE = 'openstack'
ADMIN = 'admin:0123456789abcdef0123456789abcdef'
HOST = 'notify-compute'

_NOTIFICATIONS = """
[DEFAULT]
transport_url = rabbit://guest:guest@127.0.0.1:%(port)d/

[notifications]
notification_format = versioned
versioned_notifications_topics = %(topic)s

[oslo_messaging_notifications]
driver = messagingv2
"""

PAYLOAD_FIELDS = {'host', 'binary', 'topic', 'report_count', 'disabled',
                  'disabled_reason', 'availability_zone', 'last_seen_up',
                  'forced_down', 'version', 'uuid'}
AGGREGATE_FIELDS = {'id', 'uuid', 'name', 'hosts', 'metadata'}
# The keys of Nova's InstanceCreatePayload 1.13, as its sample
# notifications doc/notification_samples/instance-create-*.json have them
# (InstancePayload 1.9, InstanceActionPayload's fault and the create's own).
INSTANCE_CREATE_FIELDS = {
    'action_initiator_project', 'action_initiator_user', 'architecture',
    'auto_disk_config', 'availability_zone', 'block_devices', 'created_at',
    'deleted_at', 'display_description', 'display_name', 'fault', 'flavor',
    'host', 'host_name', 'image_uuid', 'instance_name', 'ip_addresses',
    'kernel_id', 'key_name', 'keypairs', 'launched_at', 'locked',
    'locked_reason', 'metadata', 'node', 'os_type', 'power_state',
    'progress', 'ramdisk_id', 'request_id', 'reservation_id', 'shares',
    'state', 'tags', 'task_state', 'tenant_id', 'terminated_at',
    'trusted_image_certificates', 'updated_at', 'user_id', 'uuid'}
EXCEPTION_FIELDS = {'module_name', 'function_name', 'exception',
                    'exception_message', 'traceback'}


def _broker_up():
    try:
        with socket.create_connection(BROKER, timeout=1):
            return True
    except OSError:
        return False


class Consumer:
    """A private, exclusive queue bound to ``<topic>.*`` on the exchange."""

    def __init__(self, topic):
        self.messages = []
        self._connection = kombu.Connection(AMQP_URL)
        exchange = kombu.Exchange(EXCHANGE, type='topic', durable=False)
        queue = kombu.Queue(exclusive=True, auto_delete=True,
                            exchange=exchange, routing_key=topic + '.*')
        self._consumer = self._connection.Consumer(
            queue, callbacks=[self._received], accept=['json'])
        self._consumer.consume()

    def _received(self, body, message):
        self.messages.append(body)
        message.ack()

    def collect(self, seconds):
        """Every message received so far plus for ``seconds`` more."""
        deadline = time.monotonic() + seconds
        while time.monotonic() < deadline:
            try:
                self._connection.drain_events(
                    timeout=max(0.05, deadline - time.monotonic()))
            except socket.timeout:
                pass
        return [json.loads(body['oslo.message']) for body in self.messages]

    def wait_for(self, count, timeout=30):
        deadline = time.monotonic() + timeout
        while len(self.messages) < count and time.monotonic() < deadline:
            self.collect(0.2)
        return self.collect(0)

    def close(self):
        self._consumer.cancel()
        self._connection.release()


class NotificationTestCase(testtools.TestCase):

    BROKER_PORT = BROKER[1]

    def setUp(self):
        super().setUp()
        if self.BROKER_PORT == BROKER[1] and not _broker_up():
            if os.environ.get('NOVA_FORCEDOWN_REQUIRE_RABBITMQ'):
                self.fail('RabbitMQ is not listening on 127.0.0.1:5672')
            self.skipTest('RabbitMQ is not listening on 127.0.0.1:5672')
        self.topic = 'nf_test_%s' % uuid.uuid4().hex
        self.database = self.useFixture(commands.DatabaseFile())
        with open(self.database.config_file, 'a') as config:
            config.write(_NOTIFICATIONS % {'port': self.BROKER_PORT,
                                           'topic': self.topic})
        if self.BROKER_PORT == BROKER[1]:
            self.consumer = Consumer(self.topic)
            self.addCleanup(self.consumer.close)
            self.addCleanup(rabbitmq.delete_queue, self.topic + '.info')

    def start_api(self):
        self.port = processes.free_port()
        api = self.useFixture(processes.Process([
            processes.script('nova-forcedown-api'), '--dev',
            '--config-file', self.database.config_file,
            '--port', str(self.port)]))
        processes.wait_for_http('http://127.0.0.1:%d/' % self.port,
                                process=api.process)
        return api

    def start_agent(self):
        agent = self.useFixture(commands.AgentProcess(
            self.database, '--host', HOST))
        self.assertTrue(commands.wait_until(
            lambda: self.database.services(host=HOST)),
            agent.log())
        return agent

    def request(self, method, path, body=None, version='2.11'):
        """(status, parsed body, seconds taken) of one API call."""
        request = urllib.request.Request(
            'http://127.0.0.1:%d/v2.1%s' % (self.port, path), method=method,
            data=None if body is None else json.dumps(body).encode(),
            headers={'X-Auth-Token': ADMIN,
                     'Content-Type': 'application/json',
                     'OpenStack-API-Version': 'compute %s' % version})
        started = time.monotonic()
        try:
            with urllib.request.urlopen(request, timeout=10) as response:
                status, raw = response.status, response.read()
        except urllib.error.HTTPError as error:
            status, raw = error.code, error.read()
        taken = time.monotonic() - started
        return status, json.loads(raw) if raw else None, taken

    def force_down(self, value=True):
        return self.request('PUT', '/os-services/force-down', {
            'host': HOST, 'binary': 'nova-compute', 'forced_down': value})

    def wait_for_heartbeats(self, agent, beats=2):
        first = self.database.services(host=HOST)[0]['report_count']
        self.assertTrue(commands.wait_until(
            lambda: self.database.services(host=HOST)[0]['report_count'] >=
            first + beats), agent.log())


class TestServiceNotifications(NotificationTestCase):

    def assert_envelope(self, message, event_type, **data):
        self.assertEqual('INFO', message['priority'])
        self.assertEqual(event_type, message['event_type'])
        self.assertEqual('nova-compute:' + HOST, message['publisher_id'])
        self.assertIn('message_id', message)
        self.assertIn('timestamp', message)
        payload = message['payload']
        self.assertEqual({'nova_object.name', 'nova_object.namespace',
                          'nova_object.version', 'nova_object.data'},
                         set(payload))
        self.assertEqual('ServiceStatusPayload', payload['nova_object.name'])
        self.assertEqual('nova', payload['nova_object.namespace'])
        self.assertEqual('1.1', payload['nova_object.version'])
        self.assertEqual(PAYLOAD_FIELDS, set(payload['nova_object.data']))
        self.assertEqual(self.service_uuid,
                         payload['nova_object.data']['uuid'])
        for key, value in dict(host=HOST, binary='nova-compute',
                               topic='compute', **data).items():
            self.assertEqual(value, payload['nova_object.data'][key], key)
        self.assertNotIn('_context_auth_token', message)

    def test_force_down_update_and_delete(self):
        self.start_api()
        agent = self.start_agent()
        self.service_uuid = self.database.services(host=HOST)[0]['uuid']

        # Registration notifies service.create; heartbeats notify nothing.
        created = self.consumer.wait_for(1)
        self.assertEqual(1, len(created), created)
        self.assert_envelope(created[0], 'service.create',
                             forced_down=False, disabled=False)
        self.wait_for_heartbeats(agent)
        self.assertEqual(1, len(self.consumer.collect(0.5)))

        status, body, _ = self.force_down(True)
        self.assertEqual(200, status, body)
        self.wait_for_heartbeats(agent)
        received = self.consumer.collect(0.5)
        self.assertEqual(2, len(received), received)
        self.assert_envelope(received[1], 'service.update',
                             forced_down=True, disabled=False)

        # An update by UUID (2.53) and a delete, each notified once.
        agent.stop()
        status, body, _ = self.request(
            'PUT', '/os-services/' + self.service_uuid,
            {'status': 'disabled', 'disabled_reason': 'fenced'}, '2.53')
        self.assertEqual(200, status, body)
        status, body, _ = self.request(
            'DELETE', '/os-services/' + self.service_uuid, version='2.53')
        self.assertEqual(204, status, body)
        received = self.consumer.wait_for(4)
        self.assertEqual(4, len(received), received)
        self.assert_envelope(received[2], 'service.update', forced_down=True,
                             disabled=True, disabled_reason='fenced')
        self.assert_envelope(received[3], 'service.delete', forced_down=True,
                             disabled=True)

    def test_manage_listen_prints_events(self):
        listen = self.useFixture(processes.Process([
            processes.script('nova-forcedown-manage'), '--config-file',
            self.database.config_file, 'notifications', 'listen']))
        self.assertTrue(commands.wait_until(
            lambda: 'Listening to %s' % self.topic in listen.output()),
            listen.output())
        self.start_agent()
        result = commands.manage(self.database, 'service', 'force-down',
                                 HOST)
        self.assertEqual(0, result.returncode, result.stderr)
        self.assertTrue(commands.wait_until(
            lambda: 'service.update' in listen.output()),
            listen.output())
        self.assertEqual(0, listen.stop(signal.SIGINT))
        output = listen.output()
        self.assertIn('INFO service.create nova-compute:%s' % HOST, output)
        self.assertIn('INFO service.update nova-compute:%s' % HOST, output)
        self.assertIn('ServiceStatusPayload 1.1 {', output)
        self.assertIn('"forced_down":true', output)
        self.assertNotIn('Traceback', output)


class TestAggregateNotifications(NotificationTestCase):

    def aggregate_events(self, messages):
        return [message for message in messages
                if message['event_type'].startswith('aggregate.')]

    def test_agent_placing_its_host_in_a_new_zone(self):
        agent = self.useFixture(commands.AgentProcess(
            self.database, '--host', HOST, '--availability-zone', 'az-n'))
        received = self.aggregate_events(self.consumer.wait_for(5))
        self.assertEqual(['aggregate.create.start', 'aggregate.create.end',
                          'aggregate.add_host.start',
                          'aggregate.add_host.end'],
                         [message['event_type'] for message in received],
                         agent.log())
        [stored] = self.database.query('SELECT id, uuid FROM aggregates')
        for message in received:
            self.assertEqual('INFO', message['priority'])
            self.assertEqual('nova-api:' + os.uname().nodename,
                             message['publisher_id'])
            payload = message['payload']
            self.assertEqual(('AggregatePayload', 'nova', '1.1'),
                             (payload['nova_object.name'],
                              payload['nova_object.namespace'],
                              payload['nova_object.version']))
            data = payload['nova_object.data']
            self.assertEqual(AGGREGATE_FIELDS, set(data))
            self.assertEqual(('az-n', stored['uuid'],
                              {'availability_zone': 'az-n'}),
                             (data['name'], data['uuid'], data['metadata']))
        self.assertEqual(
            [(None, None), (stored['id'], []), (stored['id'], []),
             (stored['id'], [HOST])],
            [(message['payload']['nova_object.data']['id'],
              message['payload']['nova_object.data']['hosts'])
             for message in received])

        # Heartbeats and a restart in the same zone change no aggregate.
        self.assertEqual(0, agent.stop())
        beats = self.database.services(host=HOST)[0]['report_count']
        self.useFixture(commands.AgentProcess(
            self.database, '--host', HOST, '--availability-zone', 'az-n'))
        self.assertTrue(commands.wait_until(
            lambda: self.database.services(host=HOST)[0]['report_count'] >
            beats + 1))
        self.assertEqual(4, len(self.aggregate_events(
            self.consumer.collect(0.5))))


class TestInstanceNotifications(NotificationTestCase):
    """Instance notifications from the API and from the server's host.

    lock and unlock from the API, power_off and power_on from the host, and
    instance.update from both when notify_on_state_change asks.
    """

    def setUp(self):
        super().setUp()
        with open(self.database.config_file, 'a') as config:
            config.write('\n[notifications]\n'
                         'notify_on_state_change = vm_and_task_state\n')

    def instance_events(self, messages):
        return [message for message in messages
                if message['event_type'].startswith('instance.')]

    def action(self, uuid, body):
        status, answer, _ = self.request(
            'POST', '/servers/%s/action' % uuid, body, '2.73')
        self.assertEqual(202, status, answer)

    def test_lock_stop_start_unlock(self):
        self.start_api()
        agent = self.useFixture(commands.AgentProcess(
            self.database, '--driver', 'fake', '--hosts', '1',
            '--instances', '1', '--host-prefix', 'notify-'))
        self.assertTrue(commands.wait_until(
            lambda: self.database.query('SELECT uuid FROM instances')),
            agent.log())
        [server] = self.database.query('SELECT uuid FROM instances')
        uuid = server['uuid']

        self.action(uuid, {'lock': {'locked_reason': 'recovering'}})
        self.action(uuid, {'os-stop': None})
        self.assertTrue(commands.wait_until(lambda: self.request(
            'GET', '/servers/' + uuid)[1]['server']['status'] == 'SHUTOFF'))
        self.action(uuid, {'os-start': None})
        self.assertTrue(commands.wait_until(lambda: self.request(
            'GET', '/servers/' + uuid)[1]['server']['status'] == 'ACTIVE'))
        self.action(uuid, {'unlock': None})

        received = self.instance_events(self.consumer.wait_for(11))
        # Each publisher's own order; the API's and the agent's messages
        # interleave as the two processes happen to run.
        by_publisher = collections.defaultdict(list)
        for message in received:
            publisher = message['publisher_id'].split(':')[0]
            by_publisher[publisher].append(message)
        self.assertEqual(
            {'nova-api': ['instance.lock', 'instance.update',
                          'instance.update', 'instance.unlock'],
             'nova-compute': ['instance.power_off.start',
                              'instance.power_off.end', 'instance.update',
                              'instance.power_on.start',
                              'instance.power_on.end', 'instance.update']},
            {publisher: [message['event_type'] for message in messages]
             for publisher, messages in by_publisher.items()}, agent.log())
        api, compute = by_publisher['nova-api'], by_publisher['nova-compute']
        locked = api[0]['payload']
        self.assertEqual(
            ('InstanceActionPayload', 'nova', '1.8'),
            (locked['nova_object.name'], locked['nova_object.namespace'],
             locked['nova_object.version']))
        locked = locked['nova_object.data']
        self.assertEqual((uuid, True, 'recovering', 'active', 'running'),
                         (locked['uuid'], locked['locked'],
                          locked['locked_reason'], locked['state'],
                          locked['power_state']))
        self.assertEqual('FlavorPayload',
                         locked['flavor']['nova_object.name'])
        stopped = compute[1]['payload']['nova_object.data']
        self.assertEqual(('stopped', 'shutdown', 'notify-1'),
                         (stopped['state'], stopped['power_state'],
                          stopped['host']))
        self.assertEqual('notify-1', compute[1]['publisher_id'].split(':')[1])
        update = compute[2]['payload']['nova_object.data']['state_update'][
            'nova_object.data']
        self.assertEqual({'old_state': 'active', 'state': 'stopped',
                          'old_task_state': 'powering-off',
                          'new_task_state': None}, update)

    def test_create_and_delete_from_the_host(self):
        # A build cast before the agent's listener is bound to its queue
        # is lost to RPC; the agent finds it in the database at its next
        # look, every 30 s by default, as long as this test's waits.
        with open(self.database.config_file, 'a') as config:
            config.write('\n[DEFAULT]\ntask_reconcile_interval = 2\n')
        self.start_api()
        agent = self.useFixture(commands.AgentProcess(
            self.database, '--driver', 'fake', '--hosts', '1',
            '--instances', '0', '--host-prefix', 'notify-'))
        self.assertTrue(commands.wait_until(
            lambda: self.database.services(binary='nova-compute')),
            agent.log())

        status, answer, _ = self.request('POST', '/servers', {'server': {
            'name': 'web', 'flavorRef': '1', 'networks': 'none',
            'tags': ['web', 'db'],
            'imageRef': '6a3e9d52-7c1f-4b8e-9f2d-0e5b4c3a2d10'}}, '2.52')
        self.assertEqual(202, status, answer)
        uuid = answer['server']['id']
        self.assertTrue(commands.wait_until(lambda: self.request(
            'GET', '/servers/' + uuid)[1]['server']['status'] == 'ACTIVE'),
            agent.log())
        status, answer, _ = self.request('DELETE', '/servers/' + uuid)
        self.assertEqual(204, status, answer)

        def from_the_host():
            return [message for message in self.instance_events(
                self.consumer.collect(0.2))
                if message['publisher_id'].startswith('nova-compute')]

        self.assertTrue(commands.wait_until(lambda: 'instance.delete.end' in [
            message['event_type'] for message in from_the_host()]),
            agent.log())
        compute = from_the_host()
        self.assertEqual(
            ['instance.create.start', 'instance.create.end',
             'instance.update', 'instance.delete.start',
             'instance.delete.end'],
            [message['event_type'] for message in compute], agent.log())
        [server_id] = [row['id'] for row in self.database.query(
            'SELECT id, uuid FROM instances') if row['uuid'] == uuid]
        for message in compute[:2]:
            self.assertEqual('INFO', message['priority'])
            assert_create_payload(self, message['payload'])
            data = message['payload']['nova_object.data']
            self.assertEqual(
                (uuid, 'instance-%08x' % server_id, [], ['db', 'web'],
                 None, None),
                (data['uuid'], data['instance_name'], data['keypairs'],
                 data['tags'], data['trusted_image_certificates'],
                 data['fault']))
        started = compute[0]['payload']['nova_object.data']
        self.assertEqual(('building', 'pending', 'notify-1'),
                         (started['state'], started['power_state'],
                          started['host']))
        created = compute[1]['payload']['nova_object.data']
        self.assertEqual((uuid, 'active', 'running', 'notify-1'),
                         (created['uuid'], created['state'],
                          created['power_state'], created['host']))
        deleted = compute[4]['payload']['nova_object.data']
        self.assertEqual((uuid, 'deleted'), (deleted['uuid'],
                                             deleted['state']))

    def test_host_wide_operations_notify_each_server(self):
        self.start_api()
        agent = self.useFixture(commands.AgentProcess(
            self.database, '--driver', 'fake', '--hosts', '1',
            '--instances', '2', '--host-prefix', 'fenced-'))
        self.assertTrue(commands.wait_until(
            lambda: len(self.database.query(
                'SELECT uuid FROM instances')) == 2), agent.log())
        uuids = sorted(row['uuid'] for row in self.database.query(
            'SELECT uuid FROM instances'))
        # The host fails, as a fenced one has: an agent still running
        # would sync its servers' power back to running (at its first
        # sync, which on a loaded machine came after the marking).
        agent.stop()
        status, answer, _ = self.request('PUT', '/os-services/force-down', {
            'host': 'fenced-1', 'binary': 'nova-compute',
            'forced_down': True})
        self.assertEqual(200, status, answer)

        for body in ({'mark_shutdown': None},
                     {'os-resetState': {'state': 'error'}}):
            status, answer, _ = self.request(
                'POST', '/os-host-servers/fenced-1/action', body, '2.1')
            self.assertEqual(200, status, answer)

        received = self.instance_events(self.consumer.wait_for(7))
        self.assertEqual(
            [('instance.power_off.end', 'nova-api')] * 2 +
            [('instance.reset_state', 'nova-api'),
             ('instance.update', 'nova-api')] * 2,
            [(message['event_type'], message['publisher_id'].split(':')[0])
             for message in received], agent.log())
        marked = [message['payload']['nova_object.data']
                  for message in received[:2]]
        self.assertEqual(uuids, sorted(data['uuid'] for data in marked))
        self.assertEqual({('active', 'shutdown', 'fenced-1')},
                         {(data['state'], data['power_state'], data['host'])
                          for data in marked})
        reset = received[2]['payload']['nova_object.data']
        self.assertEqual(('error', 'shutdown'),
                         (reset['state'], reset['power_state']))


def assert_create_payload(test, payload):
    """``payload`` is Nova's InstanceCreatePayload 1.13, key for key."""
    test.assertEqual(('InstanceCreatePayload', 'nova', '1.13'),
                     (payload['nova_object.name'],
                      payload['nova_object.namespace'],
                      payload['nova_object.version']))
    test.assertEqual(INSTANCE_CREATE_FIELDS, set(payload['nova_object.data']))


class TestBuildErrorNotifications(server_build._ServerBuildBase,
                                  databases.DbTestCase):
    """instance.create.error for each host a build failed on, as Nova's.

    The agents' task runners run here, on SQLite, with notifications sent
    to the real broker: the first host's hypervisor cannot build, the
    server is retried on the other, which builds it.
    """

    def setUp(self):
        super().setUp()
        if not _broker_up():
            if os.environ.get('NOVA_FORCEDOWN_REQUIRE_RABBITMQ'):
                self.fail('RabbitMQ is not listening on 127.0.0.1:5672')
            self.skipTest('RabbitMQ is not listening on 127.0.0.1:5672')
        topic = 'nf_test_%s' % uuid.uuid4().hex
        self.conf.set_override('notification_format', 'versioned',
                               group='notifications')
        self.conf.set_override('versioned_notifications_topics', [topic],
                               group='notifications')
        # Registers the transport's options on this private conf.
        oslo_messaging.get_notification_transport(self.conf).cleanup()
        self.conf.set_override('transport_url', 'rabbit://guest:guest@'
                               '127.0.0.1:%d/' % BROKER[1])
        self.conf.set_override('driver', ['messagingv2'],
                               group='oslo_messaging_notifications')
        self.consumer = Consumer(topic)
        self.addCleanup(self.consumer.close)
        for priority in ('info', 'error'):
            self.addCleanup(rabbitmq.delete_queue,
                            '%s.%s' % (topic, priority))
        notifications.configure(self.conf)
        self.addCleanup(notifications.reset)

    def test_error_from_the_failed_host_then_end_from_the_next(self):
        record, = self.create()
        other, = set(server_build.USABLE) - {record.host}

        self.runner(record.host, server_build.BrokenDriver(
            server_build._FakeAgentConf)).run_pending()
        self.runner(other).run_pending()
        self.assertTrue(notifications.flush())

        received = [message for message in self.consumer.wait_for(4)
                    if message['event_type'].startswith('instance.create')]
        self.assertEqual(
            [('instance.create.start', 'INFO', record.host),
             ('instance.create.error', 'ERROR', record.host),
             ('instance.create.start', 'INFO', other),
             ('instance.create.end', 'INFO', other)],
            [(message['event_type'], message['priority'],
              message['publisher_id'].split(':')[1])
             for message in received])
        self.assertEqual({'nova-compute'},
                         {message['publisher_id'].split(':')[0]
                          for message in received})
        for message in received:
            assert_create_payload(self, message['payload'])
        error = received[1]['payload']['nova_object.data']
        self.assertEqual((record.uuid, 'building', record.host),
                         (error['uuid'], error['state'], error['host']))
        fault = error['fault']
        self.assertEqual(('ExceptionPayload', 'nova', '1.1'),
                         (fault['nova_object.name'],
                          fault['nova_object.namespace'],
                          fault['nova_object.version']))
        self.assertEqual(EXCEPTION_FIELDS, set(fault['nova_object.data']))
        self.assertEqual(('DriverError', 'the hypervisor is out of order',
                          'spawn'),
                         (fault['nova_object.data']['exception'],
                          fault['nova_object.data']['exception_message'],
                          fault['nova_object.data']['function_name']))
        self.assertIsNone(received[3]['payload']['nova_object.data'][
            'fault'])


class TestBrokerOutage(NotificationTestCase):
    """The broker's address is a closed loopback port."""

    def setUp(self):
        self.BROKER_PORT = processes.free_port()
        super().setUp()

    def test_api_answers_at_once_and_logs(self):
        api = self.start_api()
        self.start_agent()
        for value in (True, False, True):
            status, body, taken = self.force_down(value)
            self.assertEqual(200, status, body)
            self.assertLess(taken, 1.0)
        self.assertEqual(1, self.database.services(host=HOST)[0][
            'forced_down'])
        # Each notification it could not send is one line, with why.
        self.assertTrue(commands.wait_until(
            lambda: 'Could not send a notification' in api.output()),
            'nothing logged')
        lost = [line for line in api.output().splitlines()
                if 'Could not send a notification to %s' % self.topic in line]
        self.assertTrue(lost)
        self.assertIn('Connection refused', lost[0])
        self.assertNotIn('Traceback', api.output())
