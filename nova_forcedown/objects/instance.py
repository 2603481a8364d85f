"""Instance: a server, as the hypervisor and server views and the agent
see it.

The flavor is the copy kept with the instance when it was built (a dict
of the flavor's values), so a flavor changed or deleted later still
describes it; the metadata is the user's key/value pairs.
"""

from oslo_serialization import jsonutils
from oslo_utils import uuidutils
from oslo_versionedobjects import fields

from nova_forcedown.db import instances as db_instances
from nova_forcedown import exception
from nova_forcedown.objects import base

# Columns stored as JSON text, read as dicts.
_JSON_FIELDS = ('flavor', 'user_metadata')

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


@base.ObjectRegistry.register
class Instance(base.NovaForcedownObject):
    # Version 1.0: Initial version
    # Version 1.1: Owner, flavor copy, image, names, launch times, zone,
    #              lock, progress, access addresses, config drive, metadata
    # Version 1.2: vcpus, memory_mb, root_gb, ephemeral_gb
    VERSION = '1.2'

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
    }

    def obj_make_compatible(self, primitive, target_version):
        super().obj_make_compatible(primitive, target_version)
        if target_version == '1.0':
            for name in set(self.fields) - set(_V1_0_FIELDS):
                primitive.pop(name, None)
        elif target_version == '1.1':
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


def decoded(row):
    """An InstanceRow with its JSON columns as dicts."""
    return row._replace(**{name: _decoded(name, getattr(row, name))
                           for name in _JSON_FIELDS})


def _decoded(name, text):
    if text:
        return jsonutils.loads(text)
    return {} if name == 'user_metadata' else None


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


_FLAVOR_AT = db_instances.InstanceRow._fields.index('flavor')
_METADATA_AT = db_instances.InstanceRow._fields.index('user_metadata')


def _decoded_records(rows):
    """What decoded makes of each InstanceRow, at a listing's scale.

    Each distinct JSON text is decoded once: servers built with the same
    flavor hold the same copy of it, and their records share the dict, as
    records without metadata share one empty dict (records are read-only).
    """
    decoded = {}
    no_metadata = {}
    make = db_instances.InstanceRow._make
    records = []
    for row in rows:
        values = list(row)
        flavor, metadata = values[_FLAVOR_AT], values[_METADATA_AT]
        if flavor:
            values[_FLAVOR_AT] = decoded.get(flavor) or decoded.setdefault(
                flavor, jsonutils.loads(flavor))
        else:
            values[_FLAVOR_AT] = None
        if metadata:
            values[_METADATA_AT] = decoded.get(metadata) or \
                decoded.setdefault(metadata, jsonutils.loads(metadata))
        else:
            values[_METADATA_AT] = no_metadata
        records.append(make(values))
    return records
