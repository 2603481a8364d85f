"""Servers, as the hypervisor and server views and the agent see them.

Each is read as a record (:class:`db.instances.InstanceRow`, a named
tuple) with its JSON columns decoded; nothing here is versioned, as no
server travels between processes: a cast to an agent names it only.

The flavor is the copy kept with the instance when it was built (a dict
of the flavor's values), so a flavor changed or deleted later still
describes it; the metadata is the user's key/value pairs; the system
metadata its image's properties (``image_<property>``); the network info
its ports' addresses.
"""

import collections
import secrets
import string

from oslo_serialization import jsonutils
from oslo_utils import uuidutils

from nova_forcedown.db import instances as db_instances
from nova_forcedown.db import tags as db_tags
from nova_forcedown import exception

# Columns stored as JSON text, and what a record holds where one is null.
_JSON_FIELDS = {'flavor': None, 'user_metadata': {}, 'system_metadata': {},
                'network_info': []}
# Nova's reservation ids: "r-" and 8 of these.
_RESERVATION_CHARACTERS = string.digits + string.ascii_lowercase

# The system metadata key a server created through the API keeps its
# requested networks in: 'none', or 'auto' (a port on the one network).
REQUESTED_NETWORKS = 'requested_networks'

DEFAULT_SORT = db_instances.DEFAULT_SORT
FLAVOR_COPY_COLUMNS = db_instances.FLAVOR_COPY_COLUMNS
# What a server takes of its host, copied from its flavor at creation.
RESOURCES = ('vcpus', 'memory_mb', 'root_gb', 'ephemeral_gb')


class InstanceFilters(collections.namedtuple('InstanceFilters', (
        'exact', 'regex', 'vm_states', 'task_states', 'locked',
        'changes_since', 'changes_before', 'deleted', 'flavor', 'tags',
        'tags_any', 'not_tags', 'not_tags_any'))):
    """What a listing matches.

    ``exact``: {filter name: value}; ``regex``: {filter name: regular
    expression found in its column}; ``vm_states`` and
    ``task_states``: lists of accepted states (None: any; a None item in
    ``task_states`` matches no task); ``locked``: bool or None;
    ``changes_since``/``changes_before``: datetimes compared with
    updated_at; ``deleted``: True (deleted only), False (live only) or
    None (both); ``flavor``: the flavorid of the flavor the servers were
    built with; ``tags``, ``tags_any``, ``not_tags``, ``not_tags_any``:
    lists of tags the server has all of, any of, not all of, none of
    (None: not filtered).
    """


def filters(exact=None, regex=None, vm_states=None, task_states=None,
            locked=None, changes_since=None, changes_before=None,
            deleted=False, flavor=None, tags=None, tags_any=None,
            not_tags=None, not_tags_any=None):
    return InstanceFilters(exact or {}, regex or {}, vm_states,
                           task_states, locked, changes_since,
                           changes_before, deleted, flavor, tags, tags_any,
                           not_tags, not_tags_any)


def flavor_copy(context, name):
    """(flavor row id, the copy an instance keeps) of ``name``, or None."""
    return db_instances.flavor_copy(context, name)


def copy_of_flavor(flavor):
    """The copy a server keeps of ``flavor`` (a FlavorRow)."""
    copy = {name: getattr(flavor, name) for name in FLAVOR_COPY_COLUMNS}
    copy['extra_specs'] = dict(flavor.extra_specs)
    return copy


def reservation_id():
    """A new reservation id, as Nova makes one for each build request."""
    return 'r-' + ''.join(secrets.choice(_RESERVATION_CHARACTERS)
                          for _ in range(8))


def get_record(context, uuid, project_id=None, deleted_too=False):
    """The live server ``uuid``, its JSON columns decoded.

    404 if there is none, or if ``project_id`` is given and the server
    is another project's. With ``deleted_too``, a deleted server is
    found as well.
    """
    return decoded(db_instances.instance_get_by_uuid(
        context, uuid, project_id=project_id, deleted_too=deleted_too))


def get_record_with_tags(context, uuid, project_id=None):
    """(the live server ``uuid`` as :func:`get_record` gives it, its tags)."""
    row, tags = db_instances.instance_get_with_tags(
        context, uuid, project_id=project_id)
    return decoded(row), tags


def exists(context, uuid):
    """Whether a server ``uuid`` was ever recorded (deleted ones too)."""
    try:
        db_instances.instance_get_by_uuid(context, uuid, deleted_too=True)
    except exception.InstanceNotFound:
        return False
    return True


def create(context, tags=(), **values):
    """Record a new server of ``values`` and its ``tags``; its record.

    A uuid and a reservation id are made when not given, and the
    resources it takes copied from its flavor copy.
    """
    values.setdefault('uuid', uuidutils.generate_uuid())
    values.setdefault('reservation_id', reservation_id())
    for name in RESOURCES:
        if values.get(name) is None and values.get('flavor'):
            values[name] = values['flavor'].get(name)
    for name in _JSON_FIELDS:
        if values.get(name) is not None:
            values[name] = jsonutils.dumps(values[name])
    return decoded(db_instances.instance_create(context, values, tags))


def tags_of(context, records):
    """{uuid: [tag, ...]} of the servers ``records``, in one query."""
    return db_tags.tags_of(context, [record.uuid for record in records])


def update(context, record, values):
    """Write ``values`` (no JSON column among them) to ``record``'s row.

    The record as it now is; in the open transaction if any.
    """
    return db_instances.instance_update(context, record, values)


def decoded(row):
    """An InstanceRow with its JSON columns as dicts."""
    return row._replace(**{name: _decoded(name, getattr(row, name))
                           for name in _JSON_FIELDS})


def _decoded(name, text):
    if text:
        return jsonutils.loads(text)
    empty = _JSON_FIELDS[name]
    return None if empty is None else type(empty)()


def get_by_hosts(context, hosts):
    """The records of the live servers on any of ``hosts``, in one query."""
    return _decoded_records(
        db_instances.instance_get_all_by_hosts(context, hosts))


def power_states_on(context, hosts):
    """uuid, host, vm_state, task_state and power_state of their servers."""
    return db_instances.instance_power_states(context, hosts)


def get_by_host(context, host):
    return get_by_hosts(context, [host])


def names_among(context, names):
    """Those of ``names`` that a server has or had, deleted ones too."""
    return db_instances.names_among(context, names)


def get_records(context, matching, limit=None, marker=None,
                sort=DEFAULT_SORT, columns=None):
    """Servers as records, JSON columns decoded, for listings of thousands.

    One query (two with a marker). With ``columns`` (names, no JSON
    column among them), named tuples of those columns only: what a brief
    listing needs.
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
