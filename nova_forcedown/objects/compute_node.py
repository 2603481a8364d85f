"""ComputeNode: the hypervisor a nova-compute service manages.

Two forms, each for one purpose. :class:`ComputeNode`, a versioned object,
is what the agent registers and updates. :class:`ComputeNodeRecord`, a
read-only named tuple with the node's service, is what the API's views
render, whether of one node or ten thousand: all of them come from one
join of nodes and services (``db.compute_nodes.compute_node_list_rows`` and
``compute_node_get_row``).
"""

import collections

from oslo_serialization import jsonutils
from oslo_utils import uuidutils
from oslo_versionedobjects import fields

from nova_forcedown.db import compute_nodes as db_nodes
from nova_forcedown.db import models
from nova_forcedown.db import services as db_services
from nova_forcedown import exception
from nova_forcedown.objects import base

_COLUMNS = (
    'id', 'uuid', 'service_id', 'host', 'hypervisor_hostname',
    'hypervisor_type', 'hypervisor_version', 'host_ip', 'cpu_info', 'vcpus',
    'memory_mb', 'local_gb', 'vcpus_used', 'memory_mb_used', 'local_gb_used',
    'free_ram_mb', 'free_disk_gb', 'current_workload', 'running_vms',
    'disk_available_least', 'created_at', 'updated_at', 'deleted_at')


@base.ObjectRegistry.register
class ComputeNode(base.NovaForcedownObject):
    # Version 1.0: Initial version; service is loaded with the node, by join
    # Version 2.0: service removed: views read a ComputeNodeRecord instead
    # Version 2.1: supported_instances
    VERSION = '2.1'

    fields = {
        'id': fields.IntegerField(read_only=True),
        'uuid': fields.UUIDField(),
        'service_id': fields.IntegerField(nullable=True),
        'host': fields.StringField(nullable=True),
        'hypervisor_hostname': fields.StringField(nullable=True),
        'hypervisor_type': fields.StringField(),
        'hypervisor_version': fields.IntegerField(),
        'host_ip': fields.IPAddressField(nullable=True),
        'cpu_info': fields.StringField(),
        'vcpus': fields.IntegerField(),
        'memory_mb': fields.IntegerField(),
        'local_gb': fields.IntegerField(),
        'vcpus_used': fields.IntegerField(),
        'memory_mb_used': fields.IntegerField(),
        'local_gb_used': fields.IntegerField(),
        'free_ram_mb': fields.IntegerField(nullable=True),
        'free_disk_gb': fields.IntegerField(nullable=True),
        'current_workload': fields.IntegerField(nullable=True),
        'running_vms': fields.IntegerField(nullable=True),
        'disk_available_least': fields.IntegerField(nullable=True),
        'stats': fields.DictOfNullableStringsField(nullable=True),
        'supported_instances': fields.ListOfListsOfStringsField(
            nullable=True),
        'created_at': fields.DateTimeField(nullable=True),
        'updated_at': fields.DateTimeField(nullable=True),
        'deleted_at': fields.DateTimeField(nullable=True),
    }

    @staticmethod
    def _from_db_object(context, node, db_node):
        for field in _COLUMNS:
            setattr(node, field, getattr(db_node, field))
        node.stats = jsonutils.loads(db_node.stats) if db_node.stats else {}
        node.supported_instances = (
            None if db_node.supported_instances is None
            else jsonutils.loads(db_node.supported_instances))
        node._context = context
        node.obj_reset_changes()
        return node

    @staticmethod
    def get_record(context, node_id):
        """The :class:`ComputeNodeRecord` of a node with its compute service.

        ``node_id`` is an integer id or a UUID string; ComputeNodeNotFound
        when there is no such node or its service is gone.
        """
        if uuidutils.is_uuid_like(node_id):
            return db_nodes.compute_node_get_row(
                context, node_uuid=node_id, make=ComputeNodeRecord.from_row)
        return db_nodes.compute_node_get_row(
            context, node_id=node_id, make=ComputeNodeRecord.from_row)

    def create(self):
        values = self._db_values(self.obj_get_changes())
        values.setdefault('uuid', uuidutils.generate_uuid())
        db_node = db_nodes.compute_node_create(self._context, values)
        self._from_db_object(self._context, self, db_node)

    def save(self):
        changes = self._db_values(self.obj_get_changes())
        changes.pop('id', None)
        if not changes:
            return
        written = db_nodes.compute_node_update(self._context, self.id, changes)
        self.updated_at = written['updated_at']
        self.obj_reset_changes()

    def obj_make_compatible(self, primitive, target_version):
        super().obj_make_compatible(primitive, target_version)
        if target_version == '2.0':
            primitive.pop('supported_instances', None)

    @staticmethod
    def _db_values(changes):
        if 'stats' in changes:
            changes['stats'] = jsonutils.dumps(changes['stats'] or {})
        if changes.get('supported_instances') is not None:
            changes['supported_instances'] = jsonutils.dumps(
                changes['supported_instances'])
        if changes.get('host_ip') is not None:
            changes['host_ip'] = str(changes['host_ip'])
        return changes


@base.ObjectRegistry.register
class ComputeNodeList(base.ObjectListBase, base.NovaForcedownObject):
    # Version 1.0: Initial version
    VERSION = '1.0'

    fields = {
        'objects': fields.ListOfObjectsField('ComputeNode'),
    }

    @classmethod
    def get_records_with_service(cls, context, limit=None, marker=None,
                                 hostname_pattern=None, summary=False,
                                 consume=list):
        """Nodes with their compute service, as :class:`ComputeNodeRecord`.

        In id order, from one query; ``marker`` is the id (integer or
        UUID) of the last node of the previous page, and an unknown marker
        raises MarkerNotFound. A ``summary`` reads only the fields of a
        summary view; the others are None. Returns ``consume(records)``,
        given an iterator over the records as they are read, while the
        query's transaction is open; the default is a list of them.
        """
        marker_id = cls._marker_id(context, marker)
        make = (ComputeNodeRecord.from_summary_row if summary
                else ComputeNodeRecord.from_row)
        return db_nodes.compute_node_list_rows(
            context, limit=limit, marker_id=marker_id,
            hostname_pattern=hostname_pattern, summary=summary, make=make,
            consume=consume)

    @staticmethod
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

    @classmethod
    def get_all_by_host(cls, context, host):
        nodes = cls(objects=[
            ComputeNode._from_db_object(context, ComputeNode(), db_node)
            for db_node in db_nodes.compute_node_get_all_by_host(context,
                                                                 host)])
        nodes._context = context
        nodes.obj_reset_changes()
        return nodes

    @staticmethod
    def statistics(context):
        return db_nodes.compute_node_statistics(context)


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

    Its fields are the ComputeNode fields, ``stats`` a dict; ``service``
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


def room_for(context, server, hosts):
    """[NodeUsage] of the live nodes of ``hosts`` that ``server`` fits in.

    One query, whatever the number of hosts.
    """
    nodes = (NodeUsage(capacity_of(node), node.usage)
             for node in db_nodes.nodes_with_usage(context, hosts))
    return [node for node in nodes if fits(node.capacity, node.used, server)]


def capacities_of_hosts(context, hosts):
    """[Capacity] of the live nodes of ``hosts``."""
    return [capacity_of(node)
            for node in db_nodes.node_capacities(context, hosts)]


def claim(context, capacity, server):
    """Whether ``server`` still fits in ``capacity``, its node locked.

    Call it in the transaction that places the server: the node's row
    stays locked until it commits, so the next claim on it sees this
    server there.
    """
    return fits(capacity, db_nodes.compute_node_claim_usage(
        context, capacity.node_id, capacity.host), server)
