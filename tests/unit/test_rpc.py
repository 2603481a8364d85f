"""The compute RPC API over oslo.messaging's in-memory transport.

The client and the agent's manager as they are, on ``fake:/``: what each
cast reaches, which versions the manager takes, and how a context
travels. The real broker is in tests/functional/e2e/test_rpc_tasks.py.
"""

import threading
import time

import fixtures
from oslotest import base

from nova_forcedown.compute import manager
from nova_forcedown import conf as nf_conf
from nova_forcedown import context as nf_context
from nova_forcedown import messaging
from nova_forcedown import periodic
from nova_forcedown import rpc
from nova_forcedown.rpc import caster
from nova_forcedown.rpc import compute
from nova_forcedown.rpc import transport

oslo_messaging = messaging.import_messaging()


class Woken:
    """What the manager hands the task runner: the servers it is woken for."""

    def __init__(self):
        self.uuids = []

    def wake(self, instance_uuid):
        self.uuids.append(instance_uuid)


def _conf(url):
    conf = nf_conf.make_conf([], default_config_files=[],
                             default_config_dirs=[])
    transport.register_opts(conf)
    if url is not None:
        conf.set_override('transport_url', url)
    return conf


class TestComputeRPCAPI(base.BaseTestCase):
    """An agent listening as ``host-1``, on the in-memory transport."""

    def setUp(self):
        super().setUp()
        self.conf = _conf('fake:/')
        self.woken = Woken()
        listener = manager.Listener(self.conf, 'host-1', self.woken).start()
        self.addCleanup(listener.stop)
        self.rpc_transport = transport.get_transport(self.conf)
        self.addCleanup(self.rpc_transport.cleanup)
        self.api = compute.ComputeAPI(self.rpc_transport)
        self.context = nf_context.get_admin_context()

    def _woken_for(self, count):
        _until(lambda: len(self.woken.uuids) >= count)
        return self.woken.uuids

    def test_each_task_wakes_the_runner_for_its_server(self):
        self.api.stop_instance(self.context, 'host-1', 'server-a')
        self.api.start_instance(self.context, 'host-1', 'server-b')
        self.api.rebuild_instance(self.context, 'host-1', 'server-c')

        self.assertEqual(['server-a', 'server-b', 'server-c'],
                         sorted(self._woken_for(3)))

    def test_a_cast_to_another_agent_does_not_reach_this_one(self):
        self.api.stop_instance(self.context, 'host-2', 'server-a')
        self.api.stop_instance(self.context, 'host-1', 'server-b')

        self.assertEqual(['server-b'], self._woken_for(1))
        time.sleep(0.2)
        self.assertEqual(['server-b'], self.woken.uuids)

    def _call(self, version, method='stop_instance'):
        client = oslo_messaging.get_rpc_client(
            self.rpc_transport, compute.target(),
            serializer=transport.serializer())
        return client.prepare(server='host-1', version=version,
                              timeout=10).call(self.context, method,
                                               instance_uuid='server-a')

    def test_the_manager_takes_1_1_and_refuses_a_newer_version(self):
        self.assertIsNone(self._call('1.0'))
        self.assertIsNone(self._call('1.1', 'build_and_run_instance'))
        self.assertRaises(oslo_messaging.UnsupportedVersion, self._call,
                          '2.0')
        self.assertRaises(oslo_messaging.UnsupportedVersion, self._call,
                          '1.2')
        self.assertEqual(['server-a', 'server-a'], self.woken.uuids)

    def test_an_unknown_method_is_refused(self):
        self.assertRaises(oslo_messaging.NoSuchMethod, self._call, '1.0',
                          'reboot_instance')

    def test_the_client_sends_each_method_at_its_version(self):
        sent = []
        self.useFixture(fixtures.MockPatchObject(
            self.rpc_transport, '_send',
            side_effect=lambda target, ctxt, message, **kwargs: sent.append(
                (target.topic, target.server, message))))

        self.api.rebuild_instance(self.context, 'host-9', 'server-a')

        self.api.terminate_instance(self.context, 'host-9', 'server-b')

        self.assertEqual([('compute', 'host-9', {
            'method': 'rebuild_instance', 'version': '1.0',
            'args': {'instance_uuid': 'server-a'}}), ('compute', 'host-9', {
                'method': 'terminate_instance', 'version': '1.1',
                'args': {'instance_uuid': 'server-b'}})], sent)


class TestListenerStop(base.BaseTestCase):
    """A listener stopped while it waits for the broker takes no cast."""

    def test_a_listener_stopped_while_starting_leaves_the_queue(self):
        conf = _conf('fake:/')
        broker_answers = threading.Event()
        stopped_woken = Woken()
        stopped = manager.Listener(conf, 'host-1', stopped_woken)
        # The in-memory driver answers at once: make it wait like a broker.
        driver_class = type(stopped._transport._driver)
        listen = driver_class.listen
        self.useFixture(fixtures.MockPatchObject(
            driver_class, 'listen', autospec=True,
            side_effect=lambda driver, *args: (broker_answers.wait(10) and
                                               listen(driver, *args))))
        stopped.start()
        stopped.stop(timeout=0.1)
        broker_answers.set()
        self.assertTrue(_until(lambda: not stopped._starting.is_alive()))
        rpc_transport = transport.get_transport(conf)
        self.addCleanup(rpc_transport.cleanup)
        context = nf_context.get_admin_context()

        for uuid in ('server-a', 'server-b'):
            compute.ComputeAPI(rpc_transport).stop_instance(
                context, 'host-1', uuid)
        time.sleep(0.5)  # time for a listener left running to take them
        woken = Woken()
        self.addCleanup(manager.Listener(conf, 'host-1', woken).start().stop)

        self.assertTrue(_until(lambda: len(woken.uuids) == 2, timeout=5))
        self.assertEqual([], stopped_woken.uuids)


class TestContextSerializer(base.BaseTestCase):

    def test_the_request_context_travels(self):
        asked = nf_context.RequestContext(
            user_id='operator', project_id='ops', is_admin=True,
            roles=['admin'], request_id='req-0123')
        serializer = transport.serializer()

        arrived = serializer.deserialize_context(
            serializer.serialize_context(asked))

        self.assertIsInstance(arrived, nf_context.RequestContext)
        self.assertEqual(('operator', 'ops', True, 'req-0123'),
                         (arrived.user_id, arrived.project_id,
                          arrived.is_admin, arrived.request_id))


class TestMode(base.BaseTestCase):

    def tearDown(self):
        rpc.reset()
        super().tearDown()

    def test_oslo_messaging_default_url_casts_nothing_and_says_so(self):
        log = self.useFixture(fixtures.FakeLogger())
        conf = _conf(None)

        rpc.configure(conf)

        self.assertFalse(rpc.enabled())
        self.assertIn('No [DEFAULT] transport_url: the compute agents look '
                      'for their tasks in the database every '
                      'task_poll_interval (0.5 s).', log.output)

    def test_a_transport_url_casts_and_says_where_without_credentials(self):
        log = self.useFixture(fixtures.FakeLogger())
        conf = _conf('rabbit://guest:secret@127.0.0.1:5672/')

        rpc.configure(conf)

        self.assertTrue(rpc.enabled())
        self.assertIn('Tasks are cast to the compute agents over RPC '
                      '(rabbit://127.0.0.1:5672/).', log.output)
        self.assertNotIn('secret', log.output)


class TestCasterLog(base.BaseTestCase):
    """A broker that is away: casts fail, logged when it starts and ends."""

    def test_an_unreachable_broker_is_one_warning_then_recovery(self):
        log = self.useFixture(fixtures.FakeLogger(
            name='nova_forcedown.rpc.caster'))
        conf = _conf('fake:/')
        sender = caster.Caster(conf)
        failing = _Refusing()

        for _ in range(3):
            sender._deliver(failing, (None, 'host-1', compute.STOP, 'a'))
        failing.refuse = False
        sender._deliver(failing, (None, 'host-1', compute.STOP, 'a'))

        lines = log.output.splitlines()
        self.assertEqual(2, len(lines), log.output)
        self.assertIn('Cannot tell the agents of their tasks, the message '
                      'broker is unavailable (MessageDeliveryFailure: '
                      'unreachable); they find them in the database within '
                      '[DEFAULT] task_reconcile_interval (30.0 s).', lines[0])
        self.assertIn('Recovered: the agents are told of their tasks again',
                      lines[1])
        self.assertEqual(4, failing.casts)


class _Refusing:
    """A ComputeAPI whose broker is away until ``refuse`` is cleared."""

    def __init__(self):
        self.refuse = True
        self.casts = 0

    def stop_instance(self, context, server, instance_uuid):
        self.casts += 1
        if self.refuse:
            raise oslo_messaging.MessageDeliveryFailure('unreachable')


class TestWhenWoken(base.BaseTestCase):

    def _started(self, interval):
        calls = []
        called = threading.Event()

        def look(woken):
            calls.append(woken)
            called.set()

        ticker = periodic.WhenWoken(look, interval, 'test').start()
        self.addCleanup(ticker.stop, 5)
        return ticker, calls, called

    def test_the_first_call_comes_at_once_for_everything(self):
        _, calls, called = self._started(60)

        self.assertTrue(called.wait(5))
        self.assertEqual([None], calls)

    def test_a_wake_up_calls_for_what_it_names(self):
        ticker, calls, called = self._started(60)
        self.assertTrue(called.wait(5))
        called.clear()

        ticker.wake('server-a')

        self.assertTrue(called.wait(5))
        self.assertEqual([None, {'server-a'}], calls)

    def test_wake_ups_during_a_call_are_one_call_after_it(self):
        release = threading.Event()
        calls = []

        def slow_look(woken):
            calls.append(woken)
            if woken is None:
                release.wait(5)

        ticker = periodic.WhenWoken(slow_look, 60, 'test').start()
        self.addCleanup(ticker.stop, 5)
        self.assertTrue(_until(lambda: calls))
        for uuid in ('a', 'b', 'c'):
            ticker.wake(uuid)
        release.set()

        self.assertTrue(_until(lambda: len(calls) == 2))
        time.sleep(0.1)
        self.assertEqual([None, {'a', 'b', 'c'}], calls)

    def test_the_interval_brings_a_call_for_everything(self):
        _, calls, _ = self._started(0.05)

        self.assertTrue(_until(lambda: len(calls) > 3))
        self.assertEqual({None}, set(calls))

    def test_without_an_interval_only_wake_ups_call_after_the_first(self):
        ticker, calls, called = self._started(None)
        self.assertTrue(called.wait(5))
        called.clear()
        time.sleep(0.2)
        ticker.wake('server-a')

        self.assertTrue(called.wait(5))
        self.assertEqual([None, {'server-a'}], calls)


def _until(predicate, timeout=10):
    deadline = time.monotonic() + timeout
    while not predicate() and time.monotonic() < deadline:
        time.sleep(0.01)
    return predicate()
