"""What service and aggregate notifications carry, in Nova's versioned
format.

Nova wraps a payload object in a notification object
(``ServiceStatusNotification`` 1.0, ``AggregateNotification`` 1.0: priority,
event type, publisher and payload) and puts on the wire an oslo.messaging
envelope whose ``payload`` is the payload object's primitive. Only the
payload is a versioned object on the wire, so only the payloads are ones
here; each wrapper is a plain class that produces the envelope's arguments.
"""

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
        """The payload of an Aggregate object as it now stands.

        What the aggregate does not have yet (the id and hosts of one not
        yet created, the metadata of one created without a zone) is null,
        as in Nova.
        """
        payload = cls()
        for field in cls.fields:
            setattr(payload, field, getattr(aggregate, field)
                    if aggregate.obj_attr_is_set(field) else None)
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
