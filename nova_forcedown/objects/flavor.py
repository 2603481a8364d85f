"""Flavor: the size of an instance (RAM, vCPUs, disks) and its extra specs.

Who sees a flavor is decided in the query (:mod:`nova_forcedown.db.flavors`):
an admin sees all of them, anyone else the public ones and the private ones
shared with their project.
"""

from oslo_utils import uuidutils
from oslo_versionedobjects import fields

from nova_forcedown.db import flavors as db_flavors
from nova_forcedown.objects import base

# The keys a flavor listing may be sorted by.
SORT_KEYS = db_flavors.SORT_KEYS

Filters = db_flavors.Filters

# Nova's classic flavors, which a development cloud starts with:
# (flavorid, name, memory_mb, vcpus, root_gb).
CLASSIC = (
    ('1', 'm1.tiny', 512, 1, 1),
    ('2', 'm1.small', 2048, 1, 20),
    ('3', 'm1.medium', 4096, 2, 40),
    ('4', 'm1.large', 8192, 4, 80),
    ('5', 'm1.xlarge', 16384, 8, 160),
)


@base.ObjectRegistry.register
class Flavor(base.NovaForcedownObject):
    # Version 1.0: Initial version
    VERSION = '1.0'

    fields = {
        'id': fields.IntegerField(read_only=True),
        'flavorid': fields.StringField(),
        'name': fields.StringField(),
        'memory_mb': fields.IntegerField(),
        'vcpus': fields.IntegerField(),
        'root_gb': fields.IntegerField(),
        'ephemeral_gb': fields.IntegerField(),
        'swap': fields.IntegerField(),
        'rxtx_factor': fields.FloatField(nullable=True),
        'vcpu_weight': fields.IntegerField(nullable=True),
        'disabled': fields.BooleanField(),
        'is_public': fields.BooleanField(),
        'description': fields.StringField(nullable=True),
        'extra_specs': fields.DictOfStringsField(),
        'created_at': fields.DateTimeField(nullable=True),
        'updated_at': fields.DateTimeField(nullable=True),
    }

    @staticmethod
    def _from_db_object(context, flavor, row):
        base.from_db_object(flavor, row)
        flavor._context = context
        return flavor

    def _reload(self, row):
        return self._from_db_object(self._context, self, row)

    @classmethod
    def get_by_flavor_id(cls, context, flavorid):
        """FlavorNotFound when there is none, or ``context`` may not see it."""
        return cls._from_db_object(
            context, cls(),
            db_flavors.flavor_get_by_flavor_id(context, flavorid))

    @classmethod
    def create(cls, context, name, memory_mb, vcpus, root_gb, flavorid=None,
               ephemeral_gb=0, swap=0, rxtx_factor=1.0, is_public=True,
               description=None, projects=()):
        """A new flavor; a UUID is its id when none is given.

        FlavorExists when the name is taken, FlavorIdExists for the id.
        """
        values = {
            'flavorid': (str(flavorid) if flavorid is not None
                         else uuidutils.generate_uuid()),
            'name': name, 'memory_mb': memory_mb, 'vcpus': vcpus,
            'root_gb': root_gb, 'ephemeral_gb': ephemeral_gb, 'swap': swap,
            'rxtx_factor': rxtx_factor, 'is_public': is_public,
            'disabled': False, 'description': description,
        }
        return cls._from_db_object(
            context, cls(),
            db_flavors.flavor_create(context, values, projects=projects))

    def update_description(self, description):
        self._reload(db_flavors.flavor_update_description(
            self._context, self.flavorid, description))

    def destroy(self):
        db_flavors.flavor_destroy(self._context, self.flavorid)

    def set_extra_specs(self, extra_specs):
        """Merge ``extra_specs`` (strings) into the flavor's."""
        self.extra_specs = db_flavors.flavor_extra_specs_update(
            self._context, self.flavorid, extra_specs)
        self.obj_reset_changes(['extra_specs'])

    def delete_extra_spec(self, key):
        """FlavorExtraSpecsNotFound when the flavor has no ``key``."""
        db_flavors.flavor_extra_specs_delete(self._context, self.flavorid,
                                             key)
        self.extra_specs.pop(key, None)
        self.obj_reset_changes(['extra_specs'])

    @property
    def projects(self):
        """The projects this (private) flavor is shared with."""
        return db_flavors.flavor_projects(self._context, self.flavorid)

    def add_access(self, project_id):
        """Share it with ``project_id``; the projects it is shared with.

        FlavorAccessExists when it is already.
        """
        return db_flavors.flavor_add_project(self._context, self.flavorid,
                                             project_id)

    def remove_access(self, project_id):
        """Stop sharing it with ``project_id``; the projects left.

        FlavorAccessNotFound when it was not shared with that project.
        """
        return db_flavors.flavor_remove_project(self._context,
                                                self.flavorid, project_id)


@base.ObjectRegistry.register
class FlavorList(base.ObjectListBase, base.NovaForcedownObject):
    # Version 1.0: Initial version
    VERSION = '1.0'

    fields = {
        'objects': fields.ListOfObjectsField('Flavor'),
    }

    @classmethod
    def get_all(cls, context, filters=Filters(), sort_key='flavorid',
                sort_dir='asc', limit=None, marker=None):
        """One page of the flavors ``context`` sees; two statements.

        MarkerNotFound when ``marker`` is no flavorid ``context`` sees.
        """
        return base.list_from_db(
            cls, Flavor, context,
            db_flavors.flavor_get_all(context, filters, sort_key, sort_dir,
                                      limit, marker))

    @staticmethod
    def create_classic(context):
        """Nova's m1.tiny to m1.xlarge (ids 1-5), if no flavor exists yet.

        Returns the flavors made: none when there already are flavors.
        """
        if db_flavors.flavor_count(context):
            return []
        return [Flavor.create(context, name, memory_mb, vcpus, root_gb,
                              flavorid=flavorid)
                for flavorid, name, memory_mb, vcpus, root_gb in CLASSIC]
