"""ComputeNode: the hypervisor a nova-compute service manages."""

import collections

from oslo_serialization import jsonutils
from oslo_utils import uuidutils
from oslo_versionedobjects import fields

from nova_forcedown.db import api as db_api
from nova_forcedown import exception
from nova_forcedown.objects import base
from nova_forcedown.objects import service as service_obj

_COLUMNS = (
    'id', 'uuid', 'service_id', 'host', 'hypervisor_hostname',
    'hypervisor_type', 'hypervisor_version', 'host_ip', 'cpu_info', 'vcpus',
    'memory_mb', 'local_gb', 'vcpus_used', 'memory_mb_used', 'local_gb_used',
    'free_ram_mb', 'free_disk_gb', 'current_workload', 'running_vms',
    'disk_available_least', 'created_at', 'updated_at', 'deleted_at')


@base.ObjectRegistry.register
class ComputeNode(base.NovaForcedownObject):
    # Version 1.0: Initial version; service is loaded with the node, by join
    VERSION = '1.0'

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
        'created_at': fields.DateTimeField(nullable=True),
        'updated_at': fields.DateTimeField(nullable=True),
        'deleted_at': fields.DateTimeField(nullable=True),
        'service': fields.ObjectField('Service', nullable=True),
    }

    @staticmethod
    def _from_db_object(context, node, db_node, db_service=None):
        for field in _COLUMNS:
            setattr(node, field, getattr(db_node, field))
        node.stats = jsonutils.loads(db_node.stats) if db_node.stats else {}
        node.service = (service_obj.Service._from_db_object(
            context, service_obj.Service(), db_service)
            if db_service is not None else None)
        node._context = context
        node.obj_reset_changes()
        return node

    @classmethod
    def _from_row(cls, context, row):
        db_node, db_service = row
        return cls._from_db_object(context, cls(), db_node, db_service)

    @classmethod
    def get_with_service(cls, context, node_id):
        """A node and its compute service, by integer id or UUID string."""
        if uuidutils.is_uuid_like(node_id):
            row = db_api.compute_node_get_with_service(context,
                                                       node_uuid=node_id)
        else:
            row = db_api.compute_node_get_with_service(context,
                                                       node_id=node_id)
        return cls._from_row(context, row)

    def create(self):
        values = self._db_values(self.obj_get_changes())
        values.setdefault('uuid', uuidutils.generate_uuid())
        db_node = db_api.compute_node_create(self._context, values)
        self._from_db_object(self._context, self, db_node)

    def save(self):
        changes = self._db_values(self.obj_get_changes())
        changes.pop('id', None)
        if not changes:
            return
        written = db_api.compute_node_update(self._context, self.id, changes)
        self.updated_at = written['updated_at']
        self.obj_reset_changes()

    @staticmethod
    def _db_values(changes):
        changes.pop('service', None)
        if 'stats' in changes:
            changes['stats'] = jsonutils.dumps(changes['stats'] or {})
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
    def get_all_with_service(cls, context, limit=None, marker=None,
                             hostname_pattern=None):
        """Nodes with their compute service, in one query.

        ``marker`` is the id (integer or UUID) of the last node of the
        previous page; an unknown marker raises MarkerNotFound.
        """
        marker_id = cls._marker_id(context, marker)
        rows = db_api.compute_node_get_all_with_service(
            context, limit=limit, marker_id=marker_id,
            hostname_pattern=hostname_pattern)
        nodes = cls(objects=[ComputeNode._from_row(context, row)
                             for row in rows])
        nodes._context = context
        nodes.obj_reset_changes()
        return nodes

    @classmethod
    def get_records_with_service(cls, context, limit=None, marker=None,
                                 hostname_pattern=None, summary=False):
        """What get_all_with_service returns, as read-only records.

        For listings: the same nodes in the same order from the same one
        query, but each a :class:`ComputeNodeRecord` built straight from
        its row, not a versioned object whose every field is coerced. A
        ``summary`` reads only the fields of a summary view
        (:class:`ComputeNodeSummary`).
        """
        marker_id = cls._marker_id(context, marker)
        record = ComputeNodeSummary if summary else ComputeNodeRecord
        return db_api.compute_node_list_rows(
            context, limit=limit, marker_id=marker_id,
            hostname_pattern=hostname_pattern, summary=summary,
            make=record.from_row)

    @staticmethod
    def _marker_id(context, marker):
        if marker is None:
            return None
        try:
            if uuidutils.is_uuid_like(marker):
                return db_api.compute_node_get_by_uuid_or_id(
                    context, node_uuid=marker).id
            node_id = int(marker)
            if not 0 <= node_id <= db_api.MAX_INTEGER_ID:
                raise ValueError(marker)
            return db_api.compute_node_get_by_uuid_or_id(
                context, node_id=node_id).id
        except (exception.ComputeNodeNotFound, ValueError):
            raise exception.MarkerNotFound(marker=marker)

    @classmethod
    def get_all_by_host(cls, context, host):
        nodes = cls(objects=[
            ComputeNode._from_db_object(context, ComputeNode(), db_node)
            for db_node in db_api.compute_node_get_all_by_host(context, host)])
        nodes._context = context
        nodes.obj_reset_changes()
        return nodes

    @staticmethod
    def statistics(context):
        return db_api.compute_node_statistics(context)


# Listing records: named tuples of the columns, so a field is read at C
# speed. The node's ``stats`` column is kept as text and parsed on demand.
ServiceRecord = db_api.ServiceRow
_NODE_RECORD_FIELDS = tuple('stats_text' if column == 'stats' else column
                            for column in db_api.NODE_COLUMNS)


class ComputeNodeRecord(collections.namedtuple(
        'ComputeNodeRecord', _NODE_RECORD_FIELDS + ('service',))):
    """A compute node of a listing, read-only, with its service.

    Reads as a ComputeNode does (its fields, ``service`` with the Service
    fields, ``stats`` a dict) without copying values into a versioned
    object and coercing each one: the listings build thousands.
    """

    __slots__ = ()

    @classmethod
    def from_row(cls, row, _width=len(_NODE_RECORD_FIELDS)):
        return cls(*row[:_width], ServiceRecord(*row[_width:]))

    @property
    def stats(self):
        return jsonutils.loads(self.stats_text) if self.stats_text else {}


class ComputeNodeSummary(collections.namedtuple(
        'ComputeNodeSummary', db_api.NODE_SUMMARY_COLUMNS + ('service',))):
    """The fields of a node that a summary view and its links read."""

    __slots__ = ()

    @classmethod
    def from_row(cls, row, _width=len(db_api.NODE_SUMMARY_COLUMNS)):
        return cls(*row[:_width], ServiceRecord(*row[_width:]))
