"""What service and aggregate notifications carry, in Nova's versioned
format.

Nova wraps a payload object in a notification object
(``ServiceStatusNotification`` 1.0, ``AggregateNotification`` 1.0: priority,
event type, publisher and payload) and puts on the wire an oslo.messaging
envelope whose ``payload`` is the payload object's primitive. Only the
payload is a versioned object on the wire, so only the payloads are ones
here; each wrapper is a plain class that produces the envelope's arguments.
"""

import traceback

from oslo_versionedobjects import base as ovo_base
from oslo_versionedobjects import fields

PRIORITY_INFO = 'INFO'

# Nova's NotificationSource calls the nova-osapi_compute binary nova-api.
_SOURCES = {'nova-osapi_compute': 'nova-api'}

ACTIONS = ('create', 'update', 'delete')

# Nova's aggregate notifications: aggregate.<action>.<phase>.
AGGREGATE_ACTIONS = ('create', 'delete', 'add_host', 'remove_host',
                     'update_metadata', 'update_prop')
PHASES = ('start', 'end')

# Aggregates are an API resource in Nova: their notifications come from
# nova-api on the host that changed them, whichever process did here.
AGGREGATE_SOURCE = 'nova-api'
# Sources of instance notifications: the API (lock, unlock, state changes
# it makes) and the server's host (power actions).
API_SOURCE = 'nova-api'
COMPUTE_SOURCE = 'nova-compute'


class _NovaPayload(ovo_base.VersionedObject):
    """A payload in Nova's namespace, as Nova serializes it.

    ``nova_object.*`` keys, project ``nova``: a consumer written for Nova
    reads it unchanged.
    """

    OBJ_PROJECT_NAMESPACE = 'nova'
    OBJ_SERIAL_NAMESPACE = 'nova_object'

    def to_wire(self):
        """The primitive Nova sends: no ``nova_object.changes`` key."""
        self.obj_reset_changes(recursive=True)
        return self.obj_to_primitive()


# register_if(False) gives the class its field properties without entering
# it in oslo.versionedobjects' registry, which is one per process and holds
# the project's own (pinned) objects: a payload is only ever serialized
# here, never rebuilt from a primitive.
@ovo_base.VersionedObjectRegistry.register_if(False)
class ServiceStatusPayload(_NovaPayload):
    """Nova's ServiceStatusPayload, field for field."""

    # Version 1.0: Initial version (Nova, Mitaka)
    # Version 1.1: Added uuid (Nova, Pike)
    VERSION = '1.1'

    fields = {
        'host': fields.StringField(nullable=True),
        'binary': fields.StringField(nullable=True),
        'topic': fields.StringField(nullable=True),
        'report_count': fields.IntegerField(),
        'disabled': fields.BooleanField(),
        'disabled_reason': fields.StringField(nullable=True),
        'availability_zone': fields.StringField(nullable=True),
        'last_seen_up': fields.DateTimeField(nullable=True),
        'forced_down': fields.BooleanField(),
        'version': fields.IntegerField(),
        'uuid': fields.UUIDField(),
    }

    @classmethod
    def from_service(cls, service):
        """The payload of a Service object, as the row now stands.

        A field the service does not have set (a uuid missing from a very
        old row) is left out rather than invented.
        """
        payload = cls()
        for field in cls.fields:
            if service.obj_attr_is_set(field):
                value = getattr(service, field)
                if value is not None or cls.fields[field].nullable:
                    setattr(payload, field, value)
        return payload


@ovo_base.VersionedObjectRegistry.register_if(False)
class AggregatePayload(_NovaPayload):
    """Nova's AggregatePayload, field for field."""

    # Version 1.0: Initial version (Nova)
    # Version 1.1: id nullable: aggregate.create.start comes before the
    #              database gives the id (Nova)
    VERSION = '1.1'

    fields = {
        'id': fields.IntegerField(nullable=True),
        'uuid': fields.UUIDField(nullable=False),
        'name': fields.StringField(),
        'hosts': fields.ListOfStringsField(nullable=True),
        'metadata': fields.DictOfStringsField(nullable=True),
    }

    @classmethod
    def from_aggregate(cls, aggregate):
        """The payload of an aggregate record as it now stands.

        What the aggregate does not have yet (the id and hosts of one not
        yet created, the metadata of one created without a zone) is None
        in its record, and null here, as in Nova.
        """
        payload = cls()
        for field in cls.fields:
            setattr(payload, field, getattr(aggregate, field))
        return payload


def publisher_id(binary, host):
    """``<source>:<host>`` of the changed service, as Nova names it."""
    return '%s:%s' % (_SOURCES.get(binary, binary), host)


class ServiceStatusNotification:
    """Nova's ServiceStatusNotification 1.0, reduced to what is sent."""

    VERSION = '1.0'

    def __init__(self, service, action):
        if action not in ACTIONS:
            raise ValueError('unknown service notification action %r'
                             % action)
        self.priority = PRIORITY_INFO
        self.event_type = 'service.%s' % action
        self.publisher_id = publisher_id(service.binary, service.host)
        self.payload = ServiceStatusPayload.from_service(service)


class AggregateNotification:
    """Nova's AggregateNotification 1.0, reduced to what is sent."""

    VERSION = '1.0'

    def __init__(self, aggregate, action, phase, host):
        if action not in AGGREGATE_ACTIONS or phase not in PHASES:
            raise ValueError('unknown aggregate notification %s.%s'
                             % (action, phase))
        self.priority = PRIORITY_INFO
        self.event_type = 'aggregate.%s.%s' % (action, phase)
        self.publisher_id = publisher_id(AGGREGATE_SOURCE, host)
        self.payload = AggregatePayload.from_aggregate(aggregate)


# Nova's power_state numbers, as its notifications name them.
POWER_STATES = {0: 'pending', 1: 'running', 3: 'paused', 4: 'shutdown',
                6: 'crashed', 7: 'suspended'}

# Nova's instance notifications this project sends with an
# InstanceActionPayload: instance.<action> (lock, unlock, evacuate: no
# phase) and instance.<action>.<phase> (power_off, power_on, delete); and
# one Nova has not: reset_state (no phase), for each server a host-wide
# reset changed. instance.create.* has a payload of its own
# (InstanceCreateNotification), instance.update too.
INSTANCE_ACTIONS = ('lock', 'unlock', 'power_off', 'power_on',
                    'reset_state', 'evacuate', 'delete')
# A build that failed on a host is told by instance.create.error, at
# Nova's ERROR priority.
CREATE_PHASES = PHASES + ('error',)
PRIORITY_ERROR = 'ERROR'


@ovo_base.VersionedObjectRegistry.register_if(False)
class FlavorPayload(_NovaPayload):
    """Nova's FlavorPayload: the flavor the instance was built with."""

    # Version 1.4: Nova's current version
    VERSION = '1.4'

    fields = {
        'flavorid': fields.StringField(nullable=True),
        'name': fields.StringField(nullable=True),
        'memory_mb': fields.IntegerField(nullable=True),
        'vcpus': fields.IntegerField(nullable=True),
        'root_gb': fields.IntegerField(nullable=True),
        'ephemeral_gb': fields.IntegerField(nullable=True),
        'swap': fields.IntegerField(),
        'rxtx_factor': fields.FloatField(nullable=True),
        'vcpu_weight': fields.IntegerField(nullable=True),
        'disabled': fields.BooleanField(),
        'is_public': fields.BooleanField(),
        'extra_specs': fields.DictOfStringsField(nullable=True),
        'projects': fields.ListOfStringsField(nullable=True),
        'description': fields.StringField(nullable=True),
    }

    # What a copy that lacks a field gives, as Nova's flavor of an instance
    # would (its access list is never loaded there: null).
    _DEFAULTS = {'swap': 0, 'rxtx_factor': 1.0, 'vcpu_weight': 0,
                 'disabled': False, 'is_public': True}

    @classmethod
    def from_copy(cls, flavor):
        """The payload of the flavor copy an instance keeps."""
        flavor = flavor or {}
        payload = cls()
        for field in cls.fields:
            value = None if field == 'projects' else flavor.get(field)
            setattr(payload, field, cls._DEFAULTS.get(field)
                    if value is None else value)
        return payload


@ovo_base.VersionedObjectRegistry.register_if(False)
class InstanceStateUpdatePayload(_NovaPayload):
    """Nova's InstanceStateUpdatePayload: the states before and after."""

    VERSION = '1.0'

    fields = {
        'old_state': fields.StringField(nullable=True),
        'state': fields.StringField(nullable=True),
        'old_task_state': fields.StringField(nullable=True),
        'new_task_state': fields.StringField(nullable=True),
    }


@ovo_base.VersionedObjectRegistry.register_if(False)
class IpPayload(_NovaPayload):
    """Nova's IpPayload: a fixed address of one of the instance's ports."""

    VERSION = '1.0'

    fields = {
        'label': fields.StringField(),
        'mac': fields.MACAddressField(),
        'meta': fields.DictOfStringsField(),
        'port_uuid': fields.UUIDField(nullable=True),
        'version': fields.IntegerField(),
        'address': fields.IPV4AndV6AddressField(),
        'device_name': fields.StringField(nullable=True),
    }

    @classmethod
    def of_ports(cls, ports):
        """The payloads of ``ports`` (network_info), fixed addresses only.

        The fake driver's ports have no uuid, metadata or device name:
        null, empty and null, as Nova sends for a port without them.
        """
        return [cls(label=port['network'], mac=port['mac_address'], meta={},
                    port_uuid=None, version=port['version'],
                    address=port['address'], device_name=None)
                for port in ports or () if port.get('type') == 'fixed']


# What an instance payload copies from the instance: payload field ->
# instance field.
_INSTANCE_FIELDS = {
    'uuid': 'uuid', 'user_id': 'user_id', 'tenant_id': 'project_id',
    'display_name': 'display_name',
    'display_description': 'display_description',
    'host_name': 'hostname', 'host': 'host', 'node': 'node',
    'availability_zone': 'availability_zone', 'key_name': 'key_name',
    'created_at': 'created_at', 'launched_at': 'launched_at',
    'terminated_at': 'terminated_at', 'updated_at': 'updated_at',
    'state': 'vm_state', 'task_state': 'task_state', 'progress': 'progress',
    'locked_reason': 'locked_reason',
}


def _instance_fields():
    """The fields Nova's InstancePayload 1.8 has that servers here have.

    Left out, as nothing here has them: reservation_id, os_type,
    architecture, kernel_id, ramdisk_id, deleted_at and the block devices.
    """
    nullable_strings = ('user_id', 'tenant_id', 'display_name',
                        'display_description', 'host_name', 'host', 'node',
                        'availability_zone', 'key_name', 'state',
                        'power_state', 'task_state', 'request_id',
                        'action_initiator_user', 'action_initiator_project',
                        'locked_reason')
    found = {name: fields.StringField(nullable=True)
             for name in nullable_strings}
    found.update({
        'uuid': fields.UUIDField(),
        'image_uuid': fields.StringField(),
        'created_at': fields.DateTimeField(nullable=True),
        'launched_at': fields.DateTimeField(nullable=True),
        'terminated_at': fields.DateTimeField(nullable=True),
        'updated_at': fields.DateTimeField(nullable=True),
        'progress': fields.IntegerField(nullable=True),
        'ip_addresses': fields.ListOfObjectsField('IpPayload'),
        'metadata': fields.DictOfStringsField(),
        'locked': fields.BooleanField(),
        'auto_disk_config': fields.StringField(),
        'flavor': fields.ObjectField('FlavorPayload'),
    })
    return found


def _fill_instance(payload, instance, context):
    for field, column in _INSTANCE_FIELDS.items():
        setattr(payload, field, getattr(instance, column))
    payload.power_state = POWER_STATES.get(instance.power_state)
    payload.image_uuid = instance.image_ref or ''
    payload.ip_addresses = IpPayload.of_ports(instance.network_info)
    payload.metadata = dict(instance.user_metadata or {})
    payload.locked = instance.locked_by is not None
    payload.auto_disk_config = 'MANUAL'
    payload.flavor = FlavorPayload.from_copy(instance.flavor)
    payload.request_id = getattr(context, 'request_id', None)
    payload.action_initiator_user = getattr(context, 'user_id', None)
    payload.action_initiator_project = getattr(context, 'project_id', None)


@ovo_base.VersionedObjectRegistry.register_if(False)
class InstanceActionPayload(_NovaPayload):
    """Nova's InstanceActionPayload 1.8, without what servers here lack.

    ``fault`` is null: a failed power action is told by its event.
    """

    VERSION = '1.8'

    fields = dict(_instance_fields(),
                  fault=fields.DictOfNullableStringsField(nullable=True))

    @classmethod
    def from_instance(cls, instance, context):
        payload = cls()
        _fill_instance(payload, instance, context)
        payload.fault = None
        return payload


@ovo_base.VersionedObjectRegistry.register_if(False)
class InstanceUpdatePayload(_NovaPayload):
    """Nova's InstanceUpdatePayload 2.0, as InstanceActionPayload."""

    VERSION = '2.0'

    fields = dict(_instance_fields(),
                  state_update=fields.ObjectField(
                      'InstanceStateUpdatePayload'),
                  old_display_name=fields.StringField(nullable=True),
                  tags=fields.ListOfStringsField(),
                  audit_period=fields.DictOfNullableStringsField(
                      nullable=True))

    @classmethod
    def from_change(cls, before, after, context):
        payload = cls()
        _fill_instance(payload, after, context)
        payload.state_update = InstanceStateUpdatePayload(
            old_state=before.vm_state, state=after.vm_state,
            old_task_state=before.task_state,
            new_task_state=after.task_state)
        payload.old_display_name = None
        payload.tags = []
        payload.audit_period = None
        return payload


@ovo_base.VersionedObjectRegistry.register_if(False)
class ExceptionPayload(_NovaPayload):
    """Nova's ExceptionPayload: the error an action failed with."""

    # Version 1.1: Nova's current version (traceback added)
    VERSION = '1.1'

    fields = {
        'module_name': fields.StringField(),
        'function_name': fields.StringField(),
        'exception': fields.StringField(),
        'exception_message': fields.StringField(),
        'traceback': fields.StringField(),
    }

    @classmethod
    def from_exception(cls, error):
        """The payload of ``error``, named after the frame that raised it.

        The innermost frame of its traceback gives the module and the
        function, as in Nova; an error never raised has neither
        (``unknown``) and an empty traceback.
        """
        innermost = error.__traceback__
        while innermost is not None and innermost.tb_next is not None:
            innermost = innermost.tb_next
        module_name = function_name = 'unknown'
        if innermost is not None:
            frame = innermost.tb_frame
            module_name = frame.f_globals.get('__name__', module_name)
            function_name = frame.f_code.co_name
        formatted = (traceback.format_exception(
            type(error), error, error.__traceback__)
            if error.__traceback__ is not None else [])
        return cls(module_name=module_name, function_name=function_name,
                   exception=type(error).__name__,
                   exception_message=str(error),
                   traceback=''.join(formatted))


# Nova's default [DEFAULT] instance_name_template, of the instance's id:
# the name the hypervisor knows the server by, as the server view's
# OS-EXT-SRV-ATTR:instance_name shows it.
INSTANCE_NAME_TEMPLATE = 'instance-%08x'


@ovo_base.VersionedObjectRegistry.register_if(False)
class InstanceCreatePayload(_NovaPayload):
    """Nova's InstanceCreatePayload 1.13, with every field Nova's has.

    Nova's InstanceActionPayload 1.9 (InstancePayload and a fault) and
    what a build adds: key pairs, tags, trusted image certificates and
    the instance name. A field no server here has a value for carries
    what Nova sends for a server without it: no key pairs (no key pair
    API is served), no block devices (no volumes), shares null (Nova's
    default, ``[notifications] include_share_mapping`` off), no trusted
    certificates (null), os_type and architecture null, kernel and
    ramdisk ``''``. ``fault``: the ExceptionPayload of
    ``instance.create.error``, else null.
    """

    # Version 1.13: Nova's current version (shares in InstancePayload 1.9)
    VERSION = '1.13'

    fields = dict(
        _instance_fields(),
        reservation_id=fields.StringField(nullable=True),
        os_type=fields.StringField(nullable=True),
        architecture=fields.StringField(nullable=True),
        kernel_id=fields.StringField(nullable=True),
        ramdisk_id=fields.StringField(nullable=True),
        deleted_at=fields.DateTimeField(nullable=True),
        block_devices=fields.ListOfObjectsField('BlockDevicePayload',
                                                nullable=True),
        shares=fields.ListOfObjectsField('SharePayload', nullable=True),
        fault=fields.ObjectField('ExceptionPayload', nullable=True),
        keypairs=fields.ListOfObjectsField('KeypairPayload'),
        tags=fields.ListOfStringsField(),
        trusted_image_certificates=fields.ListOfStringsField(nullable=True),
        instance_name=fields.StringField(nullable=True))

    @classmethod
    def from_instance(cls, instance, context, error=None, tags=()):
        """The payload of a server record; ``error``: why its build failed.

        ``tags``: the server's tags.
        """
        payload = cls()
        _fill_instance(payload, instance, context)
        payload.reservation_id = instance.reservation_id
        payload.deleted_at = instance.deleted_at
        payload.os_type = payload.architecture = None
        payload.kernel_id = payload.ramdisk_id = ''
        payload.block_devices = []
        payload.shares = None
        payload.fault = (None if error is None
                         else ExceptionPayload.from_exception(error))
        payload.keypairs = []
        payload.tags = list(tags)
        payload.trusted_image_certificates = None
        payload.instance_name = INSTANCE_NAME_TEMPLATE % instance.id
        return payload


class InstanceCreateNotification:
    """Nova's InstanceCreateNotification 1.0: instance.create.<phase>.

    From the host that builds the server, as Nova's nova-compute sends
    it; ``error`` at priority ERROR.
    """

    VERSION = '1.0'

    def __init__(self, instance, context, phase, error=None, tags=()):
        if phase not in CREATE_PHASES:
            raise ValueError('unknown instance notification create.%s'
                             % phase)
        self.priority = (PRIORITY_ERROR if phase == 'error'
                         else PRIORITY_INFO)
        self.event_type = 'instance.create.%s' % phase
        self.publisher_id = publisher_id(COMPUTE_SOURCE, instance.host)
        self.payload = InstanceCreatePayload.from_instance(
            instance, context, error=error, tags=tags)


class InstanceActionNotification:
    """Nova's InstanceActionNotification: instance.<action>[.<phase>]."""

    def __init__(self, instance, context, action, phase, source, host):
        if action not in INSTANCE_ACTIONS or phase not in PHASES + (None,):
            raise ValueError('unknown instance notification %s.%s'
                             % (action, phase))
        self.priority = PRIORITY_INFO
        self.event_type = 'instance.%s%s' % (
            action, '' if phase is None else '.' + phase)
        self.publisher_id = publisher_id(source, host)
        self.payload = InstanceActionPayload.from_instance(instance, context)


class InstanceUpdateNotification:
    """Nova's InstanceUpdateNotification: instance.update."""

    def __init__(self, before, after, context, source, host):
        self.priority = PRIORITY_INFO
        self.event_type = 'instance.update'
        self.publisher_id = publisher_id(source, host)
        self.payload = InstanceUpdatePayload.from_change(before, after,
                                                         context)
