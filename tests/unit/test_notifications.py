"""Service and aggregate notifications: Nova's payloads, when they are sent,
best effort."""

import datetime
import os
import queue
from unittest import mock

import fixtures
import oslo_messaging
from oslo_versionedobjects import fixture as ovo_fixture
from oslotest import base

from nova_forcedown import conf as nf_conf
from nova_forcedown import context as nf_context
from nova_forcedown import notifications
from nova_forcedown.notifications import listener
from nova_forcedown.notifications import payload
from nova_forcedown.notifications import sender
from nova_forcedown import exception
from nova_forcedown import objects
from nova_forcedown.objects import aggregate as aggregate_obj
from nova_forcedown.objects import instance as instance_obj
from nova_forcedown.objects import service as service_obj
from tests.fixtures import configuration
from tests.fixtures import databases
from tests.fixtures import db_rows

objects.register_all()

UUID = '7c4e9bd4-2b62-4d7e-9f43-2b1d1a0c7a11'

# Version and hash of the payload's fields. A failure means the wire format
# changed: consumers written for Nova's ServiceStatusPayload 1.1 would break.
PAYLOAD_HASH = {'ServiceStatusPayload':
                '1.1-3efc748cb386a987414bb96b4abe9e33',
                'AggregatePayload':
                '1.1-2c6741627c672a7d0e2b8b6f28aa6dec'}
AGGREGATE_UUID = '788608ec-ebdc-45c5-bc7f-e5f24ab92c80'
# Nova's InstanceCreatePayload 1.13 and ExceptionPayload 1.1, pinned alike.
CREATE_PAYLOAD_HASH = {'InstanceCreatePayload':
                       '1.13-d9f87361c39911d9718f106f0e9f4122',
                       'ExceptionPayload':
                       '1.1-96f178a12691e3ef0d8e3188fc481b90'}


def _service(**fields):
    values = dict(id=1, uuid=UUID, host='compute1', binary='nova-compute',
                  topic='compute', report_count=3, disabled=False,
                  disabled_reason=None,
                  last_seen_up=datetime.datetime(2026, 8, 1, 12, 0, 5),
                  forced_down=True, version=1, availability_zone=None)
    values.update(fields)
    service = service_obj.Service(**values)
    service.obj_reset_changes()
    return service


class TestPayload(base.BaseTestCase):

    def test_wire_format_is_nova_s(self):
        primitive = payload.ServiceStatusPayload.from_service(
            _service()).to_wire()
        self.assertEqual({
            'nova_object.name': 'ServiceStatusPayload',
            'nova_object.namespace': 'nova',
            'nova_object.version': '1.1',
            'nova_object.data': {
                'host': 'compute1', 'binary': 'nova-compute',
                'topic': 'compute', 'report_count': 3, 'disabled': False,
                'disabled_reason': None, 'availability_zone': None,
                'last_seen_up': '2026-08-01T12:00:05Z', 'forced_down': True,
                'version': 1, 'uuid': UUID}}, primitive)

    def test_fields_are_pinned(self):
        checker = ovo_fixture.ObjectVersionChecker(
            {'ServiceStatusPayload': [payload.ServiceStatusPayload],
             'AggregatePayload': [payload.AggregatePayload]})
        expected, actual = checker.test_hashes(PAYLOAD_HASH)
        self.assertEqual(expected, actual)

    def test_a_missing_uuid_is_left_out(self):
        primitive = payload.ServiceStatusPayload.from_service(
            _service(uuid=None)).to_wire()
        self.assertNotIn('uuid', primitive['nova_object.data'])

    def test_publisher_is_the_changed_service(self):
        self.assertEqual('nova-compute:compute1',
                         payload.publisher_id('nova-compute', 'compute1'))
        self.assertEqual('nova-api:ctl',
                         payload.publisher_id('nova-osapi_compute', 'ctl'))
        self.assertEqual('nova-scheduler:ctl',
                         payload.publisher_id('nova-scheduler', 'ctl'))

    def test_notification_wrapper(self):
        note = payload.ServiceStatusNotification(_service(), 'update')
        self.assertEqual(('INFO', 'service.update', 'nova-compute:compute1'),
                         (note.priority, note.event_type, note.publisher_id))
        self.assertRaises(ValueError, payload.ServiceStatusNotification,
                          _service(), 'evacuate')


def _aggregate(**fields):
    """An aggregate record; what it does not have yet is None."""
    return aggregate_obj.AggregateRow(
        **dict(dict.fromkeys(aggregate_obj.AggregateRow._fields), **fields))


class TestAggregatePayload(base.BaseTestCase):

    def test_wire_format_is_nova_s(self):
        aggregate = _aggregate(
            id=1, uuid=AGGREGATE_UUID, name='my-aggregate', hosts=[],
            metadata={'availability_zone': 'nova'})
        self.assertEqual({
            'nova_object.name': 'AggregatePayload',
            'nova_object.namespace': 'nova',
            'nova_object.version': '1.1',
            'nova_object.data': {
                'id': 1, 'uuid': AGGREGATE_UUID, 'name': 'my-aggregate',
                'hosts': [], 'metadata': {'availability_zone': 'nova'}}},
            payload.AggregatePayload.from_aggregate(aggregate).to_wire())

    def test_what_an_aggregate_does_not_have_yet_is_null(self):
        aggregate = _aggregate(uuid=AGGREGATE_UUID, name='my-aggregate')
        self.assertEqual(
            {'id': None, 'uuid': AGGREGATE_UUID, 'name': 'my-aggregate',
             'hosts': None, 'metadata': None},
            payload.AggregatePayload.from_aggregate(aggregate).to_wire()[
                'nova_object.data'])

    def test_notification_wrapper(self):
        aggregate = _aggregate(uuid=AGGREGATE_UUID, name='a')
        note = payload.AggregateNotification(aggregate, 'add_host', 'end',
                                             'ctl1')
        self.assertEqual(('INFO', 'aggregate.add_host.end', 'nova-api:ctl1'),
                         (note.priority, note.event_type, note.publisher_id))
        for action, phase in (('update', 'end'), ('create', 'error')):
            self.assertRaises(ValueError, payload.AggregateNotification,
                              aggregate, action, phase, 'ctl1')


def _instance(**fields):
    """A server record as the agent reads it, building on compute1."""
    values = dict.fromkeys(instance_obj.db_instances.InstanceRow._fields)
    values.update(
        id=42, uuid=UUID, display_name='web', hostname='web',
        project_id='p', user_id='u', host='compute1', node='compute1',
        vm_state='building', task_state='spawning', power_state=0,
        progress=0, reservation_id='r-abcdefgh', image_ref=UUID,
        created_at=datetime.datetime(2026, 8, 1, 12, 0, 5),
        flavor={'flavorid': '1', 'name': 'm1.tiny', 'memory_mb': 512,
                'vcpus': 1, 'root_gb': 1, 'ephemeral_gb': 0, 'swap': 0,
                'extra_specs': {}},
        user_metadata={}, system_metadata={}, network_info=[])
    values.update(fields)
    return instance_obj.db_instances.InstanceRow(**values)


def _raised(error):
    try:
        raise error
    except Exception as caught:
        return caught


class TestInstanceCreatePayload(base.BaseTestCase):

    def test_fields_are_pinned(self):
        checker = ovo_fixture.ObjectVersionChecker(
            {'InstanceCreatePayload': [payload.InstanceCreatePayload],
             'ExceptionPayload': [payload.ExceptionPayload]})
        expected, actual = checker.test_hashes(CREATE_PAYLOAD_HASH)
        self.assertEqual(expected, actual)

    def test_what_no_server_here_has_is_what_nova_sends_without_it(self):
        ctxt = nf_context.RequestContext(user_id='u', project_id='p')
        wire = payload.InstanceCreatePayload.from_instance(
            _instance(), ctxt).to_wire()
        self.assertEqual(('InstanceCreatePayload', 'nova', '1.13'),
                         (wire['nova_object.name'],
                          wire['nova_object.namespace'],
                          wire['nova_object.version']))
        data = wire['nova_object.data']
        self.assertEqual(
            {'instance_name': 'instance-0000002a', 'keypairs': [],
             'tags': [], 'trusted_image_certificates': None,
             'block_devices': [], 'shares': None, 'fault': None,
             'reservation_id': 'r-abcdefgh', 'kernel_id': '',
             'ramdisk_id': '', 'os_type': None, 'architecture': None,
             'deleted_at': None, 'state': 'building',
             'power_state': 'pending', 'host': 'compute1'},
            {key: data[key] for key in (
                'instance_name', 'keypairs', 'tags',
                'trusted_image_certificates', 'block_devices', 'shares',
                'fault', 'reservation_id', 'kernel_id', 'ramdisk_id',
                'os_type', 'architecture', 'deleted_at', 'state',
                'power_state', 'host')})

    def test_tags_are_the_server_s(self):
        wire = payload.InstanceCreatePayload.from_instance(
            _instance(), None, tags=('db', 'web')).to_wire()
        self.assertEqual(['db', 'web'], wire['nova_object.data']['tags'])

    def test_the_flavor_has_nova_s_fields(self):
        wire = payload.InstanceCreatePayload.from_instance(
            _instance(), None).to_wire()
        flavor = wire['nova_object.data']['flavor']

        self.assertEqual(('FlavorPayload', '1.4'),
                         (flavor['nova_object.name'],
                          flavor['nova_object.version']))
        # Nova's instance-create-end.json sample, values of m1.tiny.
        self.assertEqual({
            'flavorid': '1', 'name': 'm1.tiny', 'memory_mb': 512,
            'vcpus': 1, 'root_gb': 1, 'ephemeral_gb': 0, 'swap': 0,
            'rxtx_factor': 1.0, 'vcpu_weight': 0, 'disabled': False,
            'is_public': True, 'extra_specs': {}, 'projects': None,
            'description': None}, flavor['nova_object.data'])

    def test_the_flavor_is_the_copy_the_server_keeps(self):
        copy = dict(_instance().flavor, is_public=False, vcpu_weight=2,
                    description='private')
        wire = payload.InstanceCreatePayload.from_instance(
            _instance(flavor=copy), None).to_wire()
        flavor = wire['nova_object.data']['flavor']['nova_object.data']

        self.assertEqual((False, 2, 'private'),
                         (flavor['is_public'], flavor['vcpu_weight'],
                          flavor['description']))

    def test_ip_addresses_are_the_fixed_addresses_of_its_ports(self):
        ports = [{'network': 'private', 'version': 4, 'type': 'fixed',
                  'address': '10.128.0.7', 'mac_address': 'fa:16:3e:00:00:07'},
                 {'network': 'private', 'version': 4, 'type': 'floating',
                  'address': '172.24.4.9', 'mac_address': 'fa:16:3e:00:00:07'}]
        wire = payload.InstanceCreatePayload.from_instance(
            _instance(network_info=ports), None).to_wire()

        self.assertEqual([{
            'nova_object.name': 'IpPayload', 'nova_object.namespace': 'nova',
            'nova_object.version': '1.0',
            'nova_object.data': {
                'label': 'private', 'mac': 'fa:16:3e:00:00:07', 'meta': {},
                'port_uuid': None, 'version': 4, 'address': '10.128.0.7',
                'device_name': None}}],
            wire['nova_object.data']['ip_addresses'])

    def test_error_carries_the_exception_at_error_priority(self):
        error = _raised(ValueError('the hypervisor is out of order'))
        note = payload.InstanceCreateNotification(
            _instance(), None, 'error', error=error)
        self.assertEqual(('ERROR', 'instance.create.error',
                          'nova-compute:compute1'),
                         (note.priority, note.event_type, note.publisher_id))
        fault = note.payload.to_wire()['nova_object.data']['fault']
        self.assertEqual(('ExceptionPayload', 'nova', '1.1'),
                         (fault['nova_object.name'],
                          fault['nova_object.namespace'],
                          fault['nova_object.version']))
        data = fault['nova_object.data']
        self.assertEqual(
            ('ValueError', 'the hypervisor is out of order', __name__,
             '_raised'),
            (data['exception'], data['exception_message'],
             data['module_name'], data['function_name']))
        self.assertTrue(data['traceback'].startswith('Traceback'))

    def test_start_and_end_are_info(self):
        for phase in ('start', 'end'):
            note = payload.InstanceCreateNotification(_instance(), None,
                                                      phase)
            self.assertEqual(('INFO', 'instance.create.' + phase),
                             (note.priority, note.event_type))
        self.assertRaises(ValueError, payload.InstanceCreateNotification,
                          _instance(), None, 'progress')
        self.assertRaises(ValueError, payload.InstanceActionNotification,
                          _instance(), None, 'create', 'start', 'nova-api',
                          'compute1')


class TestAggregateWhenSent(databases.DbTestCase):
    """Which Aggregate changes notify, and what each phase shows."""

    def setUp(self):
        super().setUp()
        self.sent = []
        self.useFixture(fixtures.MockPatch(
            'nova_forcedown.notifications.aggregate_changed', self._record))
        for host in ('compute1', 'compute2'):
            db_rows.create_service(self.context, host=host)

    def _record(self, context, aggregate, action, phase):
        # What the payload would carry at the time of the call.
        self.sent.append(('%s.%s' % (action, phase),
                          payload.AggregatePayload.from_aggregate(
                              aggregate).to_wire()['nova_object.data']))

    def _events(self):
        return [event for event, _ in self.sent]

    def _create(self, name='agg1', zone=None):
        aggregate = aggregate_obj.create(self.context, name, zone)
        del self.sent[:]
        return aggregate

    def test_create_start_comes_before_the_id(self):
        aggregate = aggregate_obj.create(self.context, 'agg1',
                                         'az1')
        [(start_event, start), (end_event, end)] = self.sent
        self.assertEqual(('create.start', 'create.end'),
                         (start_event, end_event))
        self.assertEqual({'id': None, 'uuid': aggregate.uuid, 'name': 'agg1',
                          'hosts': None,
                          'metadata': {'availability_zone': 'az1'}}, start)
        self.assertEqual({'id': aggregate.id, 'uuid': aggregate.uuid,
                          'name': 'agg1', 'hosts': [],
                          'metadata': {'availability_zone': 'az1'}}, end)

    def test_create_without_zone_starts_without_metadata(self):
        aggregate_obj.create(self.context, 'agg1')
        self.assertEqual([None, {}], [data['metadata']
                                      for _, data in self.sent])

    def test_duplicate_name_starts_and_never_ends(self):
        self._create('agg1')
        self.assertRaises(exception.AggregateNameExists,
                          aggregate_obj.create, self.context,
                          'agg1')
        self.assertEqual(['create.start'], self._events())

    def test_hosts_before_and_after(self):
        aggregate = self._create()
        aggregate_obj.add_host_to(self.context, aggregate.id,
                                  'compute1')
        aggregate_obj.remove_host_from(self.context, aggregate.id,
                                       'compute1')
        self.assertEqual(
            [('add_host.start', []), ('add_host.end', ['compute1']),
             ('remove_host.start', ['compute1']), ('remove_host.end', [])],
            [(event, data['hosts']) for event, data in self.sent])

    def test_a_zone_conflict_starts_add_host_and_never_ends(self):
        first = self._create('agg1', 'az1')
        other = self._create('agg2', 'az2')
        aggregate_obj.add_host_to(self.context, first.id,
                                  'compute1')
        del self.sent[:]
        self.assertRaises(exception.CannotAddAggregateHost,
                          aggregate_obj.add_host_to, self.context,
                          other.id, 'compute1')
        self.assertEqual(['add_host.start'], self._events())

    def test_unknown_host_or_aggregate_sends_nothing(self):
        aggregate = self._create()
        self.assertRaises(exception.ComputeHostNotFound,
                          aggregate_obj.add_host_to, self.context,
                          aggregate.id, 'nowhere')
        self.assertRaises(exception.AggregateNotFound,
                          aggregate_obj.remove_host_from,
                          self.context, aggregate.id + 1, 'compute1')
        self.assertEqual([], self.sent)

    def test_rename_and_zone_are_update_prop_and_update_metadata(self):
        aggregate = self._create('agg1')
        aggregate_obj.update(self.context, aggregate, name='agg2',
                             availability_zone='az1')
        self.assertEqual(
            [('update_prop.start', 'agg2', {}),
             ('update_metadata.start', 'agg2', {}),
             ('update_prop.end', 'agg2', {'availability_zone': 'az1'}),
             ('update_metadata.end', 'agg2', {'availability_zone': 'az1'})],
            [(event, data['name'], data['metadata'])
             for event, data in self.sent])

    def test_rename_alone_is_update_prop(self):
        aggregate = self._create('agg1')
        aggregate_obj.update(self.context, aggregate, name='agg2')
        self.assertEqual(['update_prop.start', 'update_prop.end'],
                         self._events())

    def test_set_metadata_shows_it_before_and_after(self):
        aggregate = self._create('agg1', 'az1')
        aggregate_obj.set_metadata(
            self.context, aggregate,
            {'ssd': 'true', 'availability_zone': 'az2'})
        self.assertEqual(
            [('update_metadata.start', {'availability_zone': 'az1'}),
             ('update_metadata.end', {'availability_zone': 'az2',
                                      'ssd': 'true'})],
            [(event, data['metadata']) for event, data in self.sent])

    def test_a_refused_zone_sends_nothing(self):
        aggregate = self._create('agg1', 'az1')
        self.assertRaises(exception.CannotUpdateAggregateMetadata,
                          aggregate_obj.set_metadata, self.context,
                          aggregate, {'availability_zone': None})
        self.assertRaises(exception.CannotUpdateAggregate,
                          aggregate_obj.update, self.context, aggregate,
                          name='agg2', availability_zone='')
        self.assertEqual([], self.sent)

    def test_delete_and_a_refused_delete(self):
        aggregate = self._create()
        aggregate_obj.add_host_to(self.context, aggregate.id,
                                  'compute1')
        aggregate = aggregate_obj.get_by_id(self.context,
                                            aggregate.id)
        del self.sent[:]
        self.assertRaises(exception.CannotDeleteAggregate,
                          aggregate_obj.destroy, self.context, aggregate)
        aggregate_obj.remove_host_from(self.context, aggregate.id,
                                       'compute1')
        aggregate = aggregate_obj.get_by_id(self.context,
                                            aggregate.id)
        aggregate_obj.destroy(self.context, aggregate)
        self.assertEqual(['delete.start', 'remove_host.start',
                          'remove_host.end', 'delete.start', 'delete.end'],
                         self._events())
        self.assertEqual(aggregate.id, self.sent[-1][1]['id'])

    def test_an_agent_placing_its_host_in_a_new_zone(self):
        aggregate_obj.place_hosts_in_zone(
            self.context, ['compute1', 'compute2'], 'az1')
        self.assertEqual(['create.start', 'create.end', 'add_host.start',
                          'add_host.end', 'add_host.start', 'add_host.end'],
                         self._events())
        self.assertEqual(['compute1', 'compute2'], self.sent[-1][1]['hosts'])


class TestWhenSent(databases.DbTestCase):
    """Which Service writes notify, on a real SQLite database."""

    def setUp(self):
        super().setUp()
        self.notified = mock.Mock()
        self.useFixture(fixtures.MockPatch(
            'nova_forcedown.notifications.service_changed', self.notified))

    def _actions(self):
        return [call.args[2] for call in self.notified.call_args_list]

    def _create(self):
        service = service_obj.Service(
            self.context, host='compute1', binary='nova-compute',
            topic='compute', report_count=0, disabled=False,
            forced_down=False, version=1)
        service.create()
        return service

    def test_create_update_delete(self):
        service = self._create()
        service.forced_down = True
        service.save()
        service.disabled = True
        service.disabled_reason = 'fenced'
        service.save()
        service.destroy()
        self.assertEqual(['create', 'update', 'update', 'delete'],
                         self._actions())
        self.assertIs(service, self.notified.call_args.args[1])

    def test_same_value_still_notifies(self):
        service = self._create()
        service.forced_down = False
        service.save()
        self.assertEqual(['create', 'update'], self._actions())

    def test_heartbeats_and_other_fields_do_not(self):
        service = self._create()
        service.record_heartbeat()
        service.report_count = 5
        service.save()
        service.version = 2
        service.availability_zone = 'az1'
        service.save()
        service.save()
        self.assertEqual(['create'], self._actions())


class TestServiceChanged(base.BaseTestCase):

    def setUp(self):
        super().setUp()
        self.conf = self.useFixture(configuration.ConfFixture(
            notifications__notification_format='versioned')).conf
        self.addCleanup(notifications.reset)
        self.sent = []
        self.useFixture(fixtures.MockPatch(
            'nova_forcedown.notifications.sender.Sender.send',
            lambda _self, *args, **kwargs: self.sent.append(args)))

    def test_disabled_by_default(self):
        conf = self.useFixture(configuration.ConfFixture()).conf
        notifications.configure(conf)
        self.assertFalse(notifications.enabled())
        notifications.service_changed(None, _service(), 'update')
        self.assertEqual([], self.sent)

    def test_sends_without_credentials(self):
        notifications.configure(self.conf)
        ctxt = nf_context.RequestContext(user_id='u', project_id='p',
                                         auth_token='secret')
        notifications.service_changed(ctxt, _service(), 'update')
        [(context, event_type, publisher, primitive)] = self.sent
        self.assertEqual(('service.update', 'nova-compute:compute1'),
                         (event_type, publisher))
        self.assertEqual('u', context['user'])
        self.assertNotIn('secret', str(context))
        self.assertTrue(primitive['nova_object.data']['forced_down'])

    def test_a_broken_notification_never_raises(self):
        notifications.configure(self.conf)
        log = self.useFixture(fixtures.FakeLogger())
        notifications.service_changed(None, object(), 'update')
        notifications.aggregate_changed(None, object(), 'create', 'start')
        self.assertEqual([], self.sent)
        self.assertIn('Could not build the service.update', log.output)
        self.assertIn('Could not build the aggregate.create.start',
                      log.output)

    def test_aggregate_changes_come_from_nova_api_on_this_host(self):
        self.conf.set_override('host', 'controller1')
        notifications.configure(self.conf)
        aggregate = _aggregate(
            id=7, uuid=AGGREGATE_UUID, name='rack-a', hosts=['compute1'],
            metadata={})
        notifications.aggregate_changed(None, aggregate, 'remove_host',
                                        'start')
        [(context, event_type, publisher, primitive)] = self.sent
        self.assertEqual(('aggregate.remove_host.start',
                          'nova-api:controller1'), (event_type, publisher))
        self.assertEqual(['compute1'], primitive['nova_object.data']['hosts'])

    def test_aggregates_notify_nothing_by_default(self):
        notifications.configure(self.useFixture(
            configuration.ConfFixture()).conf)
        notifications.aggregate_changed(
            None, _aggregate(uuid=AGGREGATE_UUID, name='a'),
            'create', 'start')
        self.assertEqual([], self.sent)


class TestSender(base.BaseTestCase):

    def test_full_queue_drops_and_logs(self):
        log = self.useFixture(fixtures.FakeLogger())
        blocked = sender.Sender(conf=None, max_queued=1)
        self.useFixture(fixtures.MockPatchObject(
            blocked, '_started', return_value=queue.Queue(1)))
        blocked.send({}, 'service.update', 'nova-compute:a', {})
        blocked.send({}, 'service.update', 'nova-compute:b', {})
        self.assertIn('1 notification(s) dropped', log.output)
        self.assertIn('nova-compute:b', log.output)

    def test_delivery_errors_are_logged(self):
        log = self.useFixture(fixtures.FakeLogger())
        notifier = mock.Mock()
        notifier.prepare.return_value.info.side_effect = OSError('down')
        sender.Sender(conf=None)._deliver(
            notifier, ({}, 'service.update', 'nova-compute:a', {}, 'INFO'))
        self.assertIn('Could not send service.update from nova-compute:a',
                      log.output)

    def test_no_driver_is_said_not_lost_silently(self):
        # oslo.messaging's Notifier counts an empty driver list as enabled,
        # and then sends nowhere.
        for drivers in ([], ['noop']):
            log = self.useFixture(fixtures.FakeLogger())
            self.assertIsNone(_sender_with_drivers(self, drivers)._notifier())
            self.assertIn('[oslo_messaging_notifications] driver is not set',
                          log.output)

    def test_an_error_is_sent_at_error_priority(self):
        notifier = mock.Mock()
        sender.Sender(conf=None)._deliver(
            notifier, ({}, 'instance.create.error', 'nova-compute:a', {},
                       'ERROR'))
        notifier.prepare.return_value.error.assert_called_once_with(
            {}, 'instance.create.error', {})
        notifier.prepare.return_value.info.assert_not_called()

    def test_a_driver_sends(self):
        log = self.useFixture(fixtures.FakeLogger())
        self.assertIsNotNone(
            _sender_with_drivers(self, ['log'])._notifier())
        self.assertNotIn('not sent', log.output)


def _sender_with_drivers(test, drivers):
    conf = test.useFixture(configuration.ConfFixture(
        notifications__notification_format='versioned')).conf
    # Registers [oslo_messaging_notifications], so that it can be set.
    oslo_messaging.get_notification_transport(conf)
    conf.set_override('driver', drivers, group='oslo_messaging_notifications')
    return sender.Sender(conf)


class TestListenerFormat(base.BaseTestCase):

    def test_versioned_payload_on_one_line(self):
        message = {'timestamp': '2026-08-01 12:00:05.1', 'priority': 'INFO',
                   'event_type': 'service.update',
                   'publisher_id': 'nova-compute:compute1',
                   'payload': payload.ServiceStatusPayload.from_service(
                       _service()).to_wire()}
        header, detail = listener.format_event(message).split('\n')
        self.assertEqual('2026-08-01 12:00:05.1 INFO service.update '
                         'nova-compute:compute1', header)
        self.assertTrue(detail.startswith(
            '    ServiceStatusPayload 1.1 {"availability_zone":null,'))
        self.assertIn('"forced_down":true', detail)

    def test_decodes_the_oslo_envelope(self):
        body = {'oslo.version': '2.0',
                'oslo.message': '{"event_type": "service.create"}'}
        self.assertEqual({'event_type': 'service.create'},
                         listener.decode(body))
        self.assertEqual({'event_type': 'x'},
                         listener.decode({'event_type': 'x'}))


class TestListenerBroker(base.BaseTestCase):

    def _conf(self, text):
        directory = self.useFixture(fixtures.TempDir()).path
        path = os.path.join(directory, 'nova_forcedown.conf')
        with open(path, 'w') as config:
            config.write(text)
        return nf_conf.make_conf(['--config-file', path])

    def test_without_a_transport_url_it_says_so(self):
        error = self.assertRaises(listener.ListenError, listener.broker_urls,
                                  self._conf('[DEFAULT]\n'))
        self.assertIn('no transport_url is set', str(error))

    def test_the_default_transport_url_is_used(self):
        _, shown = listener.broker_urls(self._conf(
            '[DEFAULT]\ntransport_url = rabbit://u:p@127.0.0.1:5673/nf\n'))
        self.assertEqual('amqp://127.0.0.1:5673/nf', shown)
