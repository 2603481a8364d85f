"""What a service notification carries, in Nova's versioned format.

Nova wraps a payload object in a notification object
(``ServiceStatusNotification`` 1.0: priority, event type, publisher and
payload) and puts on the wire an oslo.messaging envelope whose ``payload`` is
the payload object's primitive. Only the payload is a versioned object on the
wire, so only :class:`ServiceStatusPayload` is one here; the wrapper is a
plain class that produces the envelope's arguments.
"""

from oslo_versionedobjects import base as ovo_base
from oslo_versionedobjects import fields

PRIORITY_INFO = 'INFO'

# Nova's NotificationSource calls the nova-osapi_compute binary nova-api.
_SOURCES = {'nova-osapi_compute': 'nova-api'}

ACTIONS = ('create', 'update', 'delete')


# register_if(False) gives the class its field properties without entering
# it in oslo.versionedobjects' registry, which is one per process and holds
# the project's own (pinned) objects: a payload is only ever serialized
# here, never rebuilt from a primitive.
@ovo_base.VersionedObjectRegistry.register_if(False)
class ServiceStatusPayload(ovo_base.VersionedObject):
    """Nova's ServiceStatusPayload, field for field.

    Serialized in Nova's namespace (``nova_object.*``, project ``nova``) so
    that a consumer written for Nova reads it unchanged.
    """

    OBJ_PROJECT_NAMESPACE = 'nova'
    OBJ_SERIAL_NAMESPACE = 'nova_object'

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

    def to_wire(self):
        """The primitive Nova sends: no ``nova_object.changes`` key."""
        self.obj_reset_changes(recursive=True)
        return self.obj_to_primitive()


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
