"""Instance: a server, as the hypervisor and server views and the agent
see it.

The flavor is the copy kept with the instance when it was built (a dict
of the flavor's values), so a flavor changed or deleted later still
describes it; the metadata is the user's key/value pairs; the system
metadata its image's properties (``image_<property>``); the network info
its ports' addresses.
"""

import secrets
import string

from oslo_serialization import jsonutils
from oslo_utils import uuidutils
from oslo_versionedobjects import fields

from nova_forcedown.db import instances as db_instances
from nova_forcedown import exception
from nova_forcedown.objects import base

# Columns stored as JSON text, and what a record holds where one is null.
_JSON_FIELDS = {'flavor': None, 'user_metadata': {}, 'system_metadata': {},
                'network_info': []}
# Nova's reservation ids: "r-" and 8 of these.
_RESERVATION_CHARACTERS = string.digits + string.ascii_lowercase

InstanceFilters = db_instances.InstanceFilters
filters = db_instances.filters
DEFAULT_SORT = db_instances.DEFAULT_SORT
FLAVOR_COPY_COLUMNS = db_instances.FLAVOR_COPY_COLUMNS
# What a server takes of its host, copied from its flavor at creation.
RESOURCES = ('vcpus', 'memory_mb', 'root_gb', 'ephemeral_gb')


def flavor_copy(context, name):
    """(flavor row id, the copy an instance keeps) of ``name``, or None."""
    return db_instances.flavor_copy(context, name)


def _json_field():
    """A dict of anything JSON holds.

    The flavor copy has numbers and an extra_specs dict.
    """
    return fields.Field(fields.Dict(fields.FieldType()), nullable=True)


def _addresses_field():
    """The ports' addresses: a list of dicts of strings and a version."""
    return fields.Field(fields.List(fields.Dict(fields.FieldType())),
                        nullable=True)


def reservation_id():
    """A new reservation id, as Nova makes one for each build request."""
    return 'r-' + ''.join(secrets.choice(_RESERVATION_CHARACTERS)
                          for _ in range(8))


@base.ObjectRegistry.register
class Instance(base.NovaForcedownObject):
    # Version 1.0: Initial version
    # Version 1.1: Owner, flavor copy, image, names, launch times, zone,
    #              lock, progress, access addresses, config drive, metadata
    # Version 1.2: vcpus, memory_mb, root_gb, ephemeral_gb
    # Version 1.3: reservation_id, root_device_name, system_metadata,
    #              network_info
    VERSION = '1.3'

    fields = {
        'id': fields.IntegerField(read_only=True),
        'uuid': fields.UUIDField(),
        'display_name': fields.StringField(nullable=True),
        'host': fields.StringField(nullable=True),
        'node': fields.StringField(nullable=True),
        'vm_state': fields.StringField(nullable=True),
        'power_state': fields.IntegerField(nullable=True),
        'task_state': fields.StringField(nullable=True),
        'created_at': fields.DateTimeField(nullable=True),
        'updated_at': fields.DateTimeField(nullable=True),
        'project_id': fields.StringField(nullable=True),
        'user_id': fields.StringField(nullable=True),
        'display_description': fields.StringField(nullable=True),
        'instance_type_id': fields.IntegerField(nullable=True),
        'flavor': _json_field(),
        'image_ref': fields.StringField(nullable=True),
        'hostname': fields.StringField(nullable=True),
        'key_name': fields.StringField(nullable=True),
        'launched_at': fields.DateTimeField(nullable=True),
        'terminated_at': fields.DateTimeField(nullable=True),
        'availability_zone': fields.StringField(nullable=True),
        'locked_by': fields.StringField(nullable=True),
        'locked_reason': fields.StringField(nullable=True),
        'progress': fields.IntegerField(nullable=True),
        'access_ip_v4': fields.StringField(nullable=True),
        'access_ip_v6': fields.StringField(nullable=True),
        'config_drive': fields.StringField(nullable=True),
        'user_metadata': fields.DictOfNullableStringsField(nullable=True),
        'vcpus': fields.IntegerField(nullable=True),
        'memory_mb': fields.IntegerField(nullable=True),
        'root_gb': fields.IntegerField(nullable=True),
        'ephemeral_gb': fields.IntegerField(nullable=True),
        'reservation_id': fields.StringField(nullable=True),
        'root_device_name': fields.StringField(nullable=True),
        'system_metadata': fields.DictOfNullableStringsField(nullable=True),
        'network_info': _addresses_field(),
    }

    def obj_make_compatible(self, primitive, target_version):
        super().obj_make_compatible(primitive, target_version)
        if target_version == '1.0':
            for name in set(self.fields) - set(_V1_0_FIELDS):
                primitive.pop(name, None)
        if target_version in ('1.1', '1.2'):
            for name in _V1_3_FIELDS:
                primitive.pop(name, None)
        if target_version == '1.1':
            for name in RESOURCES:
                primitive.pop(name, None)

    @staticmethod
    def _from_db_object(context, instance, db_instance):
        return base.from_db_object(instance, decoded(db_instance))

    @classmethod
    def get_record(cls, context, uuid, project_id=None, deleted_too=False):
        """The live server ``uuid`` as a read-only record.

        404 if there is none, or if ``project_id`` is given and the server
        is another project's. With ``deleted_too``, a deleted server is
        found as well.
        """
        return decoded(db_instances.instance_get_by_uuid(
            context, uuid, project_id=project_id, deleted_too=deleted_too))

    @staticmethod
    def exists(context, uuid):
        """Whether a server ``uuid`` was ever recorded (deleted ones too)."""
        try:
            db_instances.instance_get_by_uuid(context, uuid, deleted_too=True)
        except exception.InstanceNotFound:
            return False
        return True

    def create(self):
        values = self.obj_get_changes()
        values.setdefault('uuid', uuidutils.generate_uuid())
        values.setdefault('reservation_id', reservation_id())
        for name in RESOURCES:
            if values.get(name) is None and values.get('flavor'):
                values[name] = values['flavor'].get(name)
        for name in _JSON_FIELDS:
            if values.get(name) is not None:
                values[name] = jsonutils.dumps(values[name])
        db_instance = db_instances.instance_create(self._context, values)
        self._from_db_object(self._context, self, db_instance)


_V1_0_FIELDS = ('id', 'uuid', 'display_name', 'host', 'node', 'vm_state',
                'power_state', 'task_state', 'created_at', 'updated_at')
_V1_3_FIELDS = ('reservation_id', 'root_device_name', 'system_metadata',
                'network_info')


def decoded(row):
    """An InstanceRow with its JSON columns as dicts."""
    return row._replace(**{name: _decoded(name, getattr(row, name))
                           for name in _JSON_FIELDS})


def _decoded(name, text):
    if text:
        return jsonutils.loads(text)
    empty = _JSON_FIELDS[name]
    return None if empty is None else type(empty)()


@base.ObjectRegistry.register
class InstanceList(base.ObjectListBase, base.NovaForcedownObject):
    # Version 1.0: Initial version
    # Version 1.1: Instance version 1.1
    VERSION = '1.1'

    fields = {
        'objects': fields.ListOfObjectsField('Instance'),
    }

    @classmethod
    def get_by_hosts(cls, context, hosts):
        """Live instances on any of ``hosts``, in one query."""
        return base.list_from_db(
            cls, Instance, context,
            db_instances.instance_get_all_by_hosts(context, hosts))

    @staticmethod
    def live_names_among(context, names):
        """Those of ``names`` a live server has, wherever it is."""
        return db_instances.live_names_among(context, names)

    @classmethod
    def get_by_host(cls, context, host):
        return cls.get_by_hosts(context, [host])

    @staticmethod
    def get_records(context, matching, limit=None, marker=None,
                    sort=DEFAULT_SORT, columns=None):
        """Servers as read-only records, JSON columns decoded.

        db.instances.InstanceRow records, for listings of thousands: one
        query (two with a marker), no versioned object per row. With
        ``columns`` (names, no JSON column among them), named tuples of
        those columns only: what a brief listing needs.
        """
        rows = db_instances.instance_get_all(
            context, matching, limit=limit, marker=marker, sort=sort,
            columns=columns)
        if columns is not None:
            return rows
        return _decoded_records(rows)


# (position in an InstanceRow, what a null there reads as) of each JSON
# column.
_JSON_AT = [(db_instances.InstanceRow._fields.index(name), empty)
            for name, empty in _JSON_FIELDS.items()]


def _decoded_records(rows):
    """What decoded makes of each InstanceRow, at a listing's scale.

    Each distinct JSON text is decoded once: servers built with the same
    flavor or image hold the same copy of it, and their records share the
    dict, as records without metadata share one empty dict (records are
    read-only).
    """
    decoded = {}
    make = db_instances.InstanceRow._make
    records = []
    for row in rows:
        values = list(row)
        for at, empty in _JSON_AT:
            text = values[at]
            if text:
                values[at] = decoded.get(text) or decoded.setdefault(
                    text, jsonutils.loads(text))
            else:
                values[at] = empty
        records.append(make(values))
    return records
