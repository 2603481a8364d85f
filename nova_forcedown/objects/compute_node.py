"""Compute nodes: the hypervisors nova-compute services manage.

Two records, each for one purpose, neither versioned (no node travels
between processes). A node as stored (``db.compute_nodes.NodeRow``, its
JSON columns decoded) is what the agent registers and updates, writing
only what changed. :class:`ComputeNodeRecord`, with the node's service,
is what the API's views render, whether of one node or ten thousand: all
of them come from one join of nodes and services
(``db.compute_nodes.compute_node_list_rows`` and ``compute_node_get_row``).
"""

import collections
import contextlib

from oslo_serialization import jsonutils
from oslo_utils import uuidutils

from nova_forcedown.db import compute_nodes as db_nodes
from nova_forcedown.db import engine as db_engine
from nova_forcedown.db import models
from nova_forcedown.db import services as db_services
from nova_forcedown import exception


def _stored(row):
    """A ``db.compute_nodes.NodeRow`` with its JSON columns decoded.

    What an agent registers and updates: ``stats`` a dict,
    ``supported_instances`` a list.
    """
    return row._replace(
        stats=jsonutils.loads(row.stats) if row.stats else {},
        supported_instances=(None if row.supported_instances is None
                             else jsonutils.loads(row.supported_instances)))


def _db_values(values):
    """``values`` as columns: the JSON ones as text."""
    values = dict(values)
    if 'stats' in values:
        values['stats'] = jsonutils.dumps(values['stats'] or {})
    if values.get('supported_instances') is not None:
        values['supported_instances'] = jsonutils.dumps(
            values['supported_instances'])
    return values


def create(context, **values):
    """Record a new node of ``values``; its row as stored, decoded."""
    values.setdefault('uuid', uuidutils.generate_uuid())
    return _stored(db_nodes.compute_node_create(context, _db_values(values)))


def save_changed(context, node, values):
    """``node`` (as stored) with those of ``values`` that differ written.

    Nothing is written when none differs. ComputeNodeNotFound when its
    row is gone.
    """
    changes = {field: value for field, value in values.items()
               if getattr(node, field) != value}
    if not changes:
        return node
    written = db_nodes.compute_node_update(context, node.id,
                                           _db_values(changes))
    return node._replace(updated_at=written['updated_at'], **changes)


def get_all_by_host(context, host):
    """The live nodes of ``host``, as stored, decoded; in id order."""
    return [_stored(row)
            for row in db_nodes.compute_node_get_all_by_host(context, host)]


def statistics(context):
    return db_nodes.compute_node_statistics(context)


def get_record(context, node_id):
    """The :class:`ComputeNodeRecord` of a node with its compute service.

    ``node_id`` is an integer id or a UUID string; ComputeNodeNotFound
    when there is no such node or its service is gone.
    """
    if uuidutils.is_uuid_like(node_id):
        row = db_nodes.compute_node_get_row(context, node_uuid=node_id)
    else:
        row = db_nodes.compute_node_get_row(context, node_id=node_id)
    return ComputeNodeRecord.from_row(row)


def get_records_with_service(context, limit=None, marker=None,
                             hostname_pattern=None, summary=False):
    """Nodes with their compute service, as :class:`ComputeNodeRecord`.

    In id order, from one query; ``marker`` is the id (integer or
    UUID) of the last node of the previous page, and an unknown marker
    raises MarkerNotFound. A ``summary`` reads only the fields of a
    summary view; the others are None.
    """
    with reading_records_with_service(
            context, limit=limit, marker=marker,
            hostname_pattern=hostname_pattern, summary=summary) as records:
        return list(records)


@contextlib.contextmanager
def reading_records_with_service(context, limit=None, marker=None,
                                 hostname_pattern=None, summary=False):
    """:func:`get_records_with_service`'s records, as the cursor reads them.

    ``with reading_records_with_service(context) as records:`` iterates
    over them, each built as its row is read, in a read transaction open
    for the body of the ``with`` statement: a listing rendered there
    never holds its nodes all at once.
    """
    with db_engine.reading(context):
        marker_id = _marker_id(context, marker)
        make = (ComputeNodeRecord.from_summary_row if summary
                else ComputeNodeRecord.from_row)
        yield map(make, db_nodes.compute_node_list_rows(
            context, limit=limit, marker_id=marker_id,
            hostname_pattern=hostname_pattern, summary=summary))


def _marker_id(context, marker):
    if marker is None:
        return None
    try:
        if uuidutils.is_uuid_like(marker):
            return db_nodes.compute_node_get_by_uuid_or_id(
                context, node_uuid=marker).id
        node_id = int(marker)
        if not 0 <= node_id <= models.MAX_INTEGER_ID:
            raise ValueError(marker)
        return db_nodes.compute_node_get_by_uuid_or_id(
            context, node_id=node_id).id
    except (exception.ComputeNodeNotFound, ValueError):
        raise exception.MarkerNotFound(marker=marker)


# Records: named tuples of the columns, so a field is read at C speed and
# no field is coerced; the views of thousands of nodes notice both. The
# node's ``stats`` column is kept as text and parsed on demand.
ServiceRecord = db_services.ServiceRow
_NODE_RECORD_FIELDS = tuple('stats_text' if column == 'stats' else column
                            for column in db_nodes.NODE_COLUMNS)
_NOT_IN_SUMMARY = (None,) * (len(_NODE_RECORD_FIELDS) -
                             db_nodes.NODE_SUMMARY_WIDTH)


class ComputeNodeRecord(collections.namedtuple(
        'ComputeNodeRecord', _NODE_RECORD_FIELDS + ('service',))):
    """A compute node as the views read it, read-only, with its service.

    Its fields are the node's columns, ``stats`` a dict; ``service``
    has the Service fields.
    """

    __slots__ = ()

    @classmethod
    def from_row(cls, row, _width=len(_NODE_RECORD_FIELDS)):
        return cls(*row[:_width], ServiceRecord(*row[_width:]))

    @classmethod
    def from_summary_row(cls, row, _width=db_nodes.NODE_SUMMARY_WIDTH):
        return cls(*row[:_width], *_NOT_IN_SUMMARY,
                   ServiceRecord(*row[_width:]))

    @property
    def stats(self):
        return jsonutils.loads(self.stats_text) if self.stats_text else {}


# ------------------------------------------------------------ capacity

# Nova's initial allocation ratios: CPU may be overcommitted, memory and
# disk not.
CPU_RATIO = 4.0
RAM_RATIO = 1.0
DISK_RATIO = 1.0

# What a node may hold, the allocation ratios applied.
Capacity = collections.namedtuple('Capacity', (
    'host', 'node', 'node_id', 'vcpus', 'memory_mb', 'disk_gb'))

# A node's capacity and the (vcpus, memory_mb, disk_gb) its servers take.
NodeUsage = collections.namedtuple('NodeUsage', ('capacity', 'used'))


def capacity_of(node):
    """The Capacity of a node row (id, host, name, vcpus, memory, disk)."""
    return Capacity(node.host, node.hypervisor_hostname, node.id,
                    int(node.vcpus * CPU_RATIO),
                    int(node.memory_mb * RAM_RATIO),
                    int(node.local_gb * DISK_RATIO))


def need_of(server):
    """(vcpus, memory_mb, disk_gb) the server takes."""
    return (server.vcpus or 0, server.memory_mb or 0,
            (server.root_gb or 0) + (server.ephemeral_gb or 0))


def fits(capacity, used, server):
    """Whether ``server`` fits in ``capacity`` beside what is ``used``."""
    limits = (capacity.vcpus, capacity.memory_mb, capacity.disk_gb)
    return all(taken + wanted <= total for taken, wanted, total in
               zip(used, need_of(server), limits))


# The compute services of some hosts and, by host, the NodeUsage of
# their nodes that may run servers (in node id order).
ComputeHosts = collections.namedtuple('ComputeHosts', ('services', 'nodes'))


def compute_hosts(context, hosts=None):
    """The :class:`ComputeHosts` of ``hosts`` (of every host when None).

    One query: what a placement reads before its transaction, whether a
    service is up and what its nodes hold beside their capacity.
    """
    services = {}
    nodes = collections.defaultdict(list)
    for service, node in db_nodes.compute_hosts_with_usage(context, hosts):
        services.setdefault(service.id, service)
        if node is not None:
            nodes[service.host].append(
                NodeUsage(capacity_of(node), node.usage))
    return ComputeHosts(list(services.values()), dict(nodes))


def claim(context, capacity, server):
    """Whether ``server`` still fits in ``capacity``, its node locked.

    Call it in the transaction that places the server: the node's row
    stays locked until it commits, so the next claim on it sees this
    server there.
    """
    return fits(capacity, db_nodes.compute_node_claim_usage(
        context, capacity.node_id, capacity.host), server)
