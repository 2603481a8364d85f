"""Flavors: the size of an instance (RAM, vCPUs, disks) and its extra specs.

A flavor is read as a record (``db.flavors.FlavorRow``, a named tuple);
nothing here is versioned, as no flavor travels between processes.

Who sees a flavor is decided in the query (:mod:`nova_forcedown.db.flavors`):
an admin sees all of them, anyone else the public ones and the private ones
shared with their project.
"""

from oslo_utils import uuidutils

from nova_forcedown.db import flavors as db_flavors

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


def get_by_flavor_id(context, flavorid):
    """The FlavorRow; FlavorNotFound if none, or ``context`` may not see it."""
    return db_flavors.flavor_get_by_flavor_id(context, flavorid)


def create(context, name, memory_mb, vcpus, root_gb, flavorid=None,
           ephemeral_gb=0, swap=0, rxtx_factor=1.0, is_public=True,
           description=None, projects=()):
    """A new flavor's FlavorRow; a UUID is its id when none is given.

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
    return db_flavors.flavor_create(context, values, projects=projects)


def update_description(context, flavorid, description):
    """The flavor's FlavorRow, its description now ``description``."""
    return db_flavors.flavor_update_description(context, flavorid,
                                                description)


def destroy(context, flavorid):
    db_flavors.flavor_destroy(context, flavorid)


def set_extra_specs(context, flavorid, extra_specs):
    """Merge ``extra_specs`` (strings) into the flavor's; all of them now."""
    return db_flavors.flavor_extra_specs_update(context, flavorid,
                                                extra_specs)


def delete_extra_spec(context, flavorid, key):
    """FlavorExtraSpecsNotFound when the flavor has no ``key``."""
    db_flavors.flavor_extra_specs_delete(context, flavorid, key)


def projects(context, flavorid):
    """The projects this (private) flavor is shared with."""
    return db_flavors.flavor_projects(context, flavorid)


def add_access(context, flavorid, project_id):
    """Share it with ``project_id``; the projects it is shared with.

    FlavorAccessExists when it is already.
    """
    return db_flavors.flavor_add_project(context, flavorid, project_id)


def remove_access(context, flavorid, project_id):
    """Stop sharing it with ``project_id``; the projects left.

    FlavorAccessNotFound when it was not shared with that project.
    """
    return db_flavors.flavor_remove_project(context, flavorid, project_id)


def get_all(context, filters=Filters(), sort_key='flavorid', sort_dir='asc',
            limit=None, marker=None):
    """One page of the flavors ``context`` sees; two statements.

    MarkerNotFound when ``marker`` is no flavorid ``context`` sees.
    """
    return db_flavors.flavor_get_all(context, filters, sort_key, sort_dir,
                                     limit, marker)


def create_classic(context):
    """Nova's m1.tiny to m1.xlarge (ids 1-5), if no flavor exists yet.

    Returns the flavors made: none when there already are flavors.
    """
    if db_flavors.flavor_count(context):
        return []
    return [create(context, name, memory_mb, vcpus, root_gb,
                   flavorid=flavorid)
            for flavorid, name, memory_mb, vcpus, root_gb in CLASSIC]
