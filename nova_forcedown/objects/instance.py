"""Instance: just enough of a server for hypervisor listings and deletes."""

from oslo_utils import uuidutils
from oslo_versionedobjects import fields

from nova_forcedown.db import api as db_api
from nova_forcedown.objects import base


@base.ObjectRegistry.register
class Instance(base.NovaForcedownObject):
    # Version 1.0: Initial version
    VERSION = '1.0'

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
    }

    @staticmethod
    def _from_db_object(context, instance, db_instance):
        return base.from_db_object(instance, db_instance)

    def create(self):
        values = self.obj_get_changes()
        values.setdefault('uuid', uuidutils.generate_uuid())
        db_instance = db_api.instance_create(self._context, values)
        self._from_db_object(self._context, self, db_instance)


@base.ObjectRegistry.register
class InstanceList(base.ObjectListBase, base.NovaForcedownObject):
    # Version 1.0: Initial version
    VERSION = '1.0'

    fields = {
        'objects': fields.ListOfObjectsField('Instance'),
    }

    @classmethod
    def get_by_hosts(cls, context, hosts):
        """Live instances on any of ``hosts``, in one query."""
        return base.list_from_db(
            cls, Instance, context,
            db_api.instance_get_all_by_hosts(context, hosts))

    @classmethod
    def get_by_host(cls, context, host):
        return cls.get_by_hosts(context, [host])
