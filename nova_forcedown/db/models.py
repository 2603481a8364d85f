"""SQLAlchemy models of the current schema (migrations build the same)."""

from oslo_db.sqlalchemy import models
import sqlalchemy as sa
from sqlalchemy.dialects import mysql
from sqlalchemy import orm


# The binary of a compute host's service.
COMPUTE_BINARY = 'nova-compute'

# Largest value of an integer primary key on every supported database.
MAX_INTEGER_ID = 2 ** 31 - 1

# Text of up to 16 MiB on MariaDB (TEXT stops at 64 KiB), as Nova's
# MediumText; plain text elsewhere.
MEDIUM_TEXT = sa.Text().with_variant(mysql.MEDIUMTEXT(), 'mysql')


def insert(connection, table, values):
    """INSERT one row of ``values`` into ``table``; its primary key.

    Core, with the columns' Python defaults (created_at, deleted).
    """
    result = connection.execute(table.insert().values(**values))
    return result.inserted_primary_key[0]


class ModelBase(models.ModelBase, orm.DeclarativeBase):
    """The declarative base of every table: one metadata for the schema."""


class Base(models.TimestampMixin, models.SoftDeleteMixin, ModelBase):
    """A table whose rows are soft-deleted (``deleted`` = the row's id)."""
    __abstract__ = True


class ApiTableBase(models.TimestampMixin, ModelBase):
    """A table Nova keeps in its API database: rows are deleted."""
    __abstract__ = True


class Service(Base):
    __tablename__ = 'services'
    __table_args__ = (
        sa.UniqueConstraint('host', 'binary', 'deleted',
                            name='uniq_services0host0binary0deleted'),
        sa.UniqueConstraint('uuid', name='uniq_services0uuid'),
        sa.Index('services_binary_deleted_idx', 'binary', 'deleted'),
    )

    id = sa.Column(sa.Integer, primary_key=True)
    uuid = sa.Column(sa.String(36), nullable=True)
    host = sa.Column(sa.String(255), nullable=False)
    binary = sa.Column(sa.String(255), nullable=False)
    topic = sa.Column(sa.String(255), nullable=True)
    report_count = sa.Column(sa.Integer, nullable=False, default=0)
    disabled = sa.Column(sa.Boolean, nullable=False, default=False)
    disabled_reason = sa.Column(sa.String(255), nullable=True)
    last_seen_up = sa.Column(sa.DateTime, nullable=True)
    forced_down = sa.Column(sa.Boolean, nullable=False, default=False,
                            server_default=sa.false())
    version = sa.Column(sa.Integer, nullable=False, default=0)
    # The RPC server the host's agent listens as; null: the host itself.
    rpc_server = sa.Column(sa.String(255), nullable=True)


class ComputeNode(Base):
    __tablename__ = 'compute_nodes'
    __table_args__ = (
        sa.UniqueConstraint('uuid', name='uniq_compute_nodes0uuid'),
        sa.Index('compute_nodes_service_id_idx', 'service_id'),
        sa.Index('compute_nodes_host_deleted_idx', 'host', 'deleted'),
        sa.Index('compute_nodes_hypervisor_hostname_idx',
                 'hypervisor_hostname'),
    )

    id = sa.Column(sa.Integer, primary_key=True)
    uuid = sa.Column(sa.String(36), nullable=False)
    service_id = sa.Column(sa.Integer, nullable=True)
    host = sa.Column(sa.String(255), nullable=True)
    hypervisor_hostname = sa.Column(sa.String(255), nullable=True)
    hypervisor_type = sa.Column(sa.String(255), nullable=False)
    hypervisor_version = sa.Column(sa.Integer, nullable=False)
    host_ip = sa.Column(sa.String(39), nullable=True)
    cpu_info = sa.Column(sa.Text, nullable=False)
    vcpus = sa.Column(sa.Integer, nullable=False)
    memory_mb = sa.Column(sa.Integer, nullable=False)
    local_gb = sa.Column(sa.Integer, nullable=False)
    vcpus_used = sa.Column(sa.Integer, nullable=False)
    memory_mb_used = sa.Column(sa.Integer, nullable=False)
    local_gb_used = sa.Column(sa.Integer, nullable=False)
    free_ram_mb = sa.Column(sa.Integer, nullable=True)
    free_disk_gb = sa.Column(sa.Integer, nullable=True)
    current_workload = sa.Column(sa.Integer, nullable=True)
    running_vms = sa.Column(sa.Integer, nullable=True)
    disk_available_least = sa.Column(sa.Integer, nullable=True)
    stats = sa.Column(sa.Text, nullable=True)
    # The kinds of server the node runs, [[arch, hypervisor type, mode]]
    # as JSON: '[]' for a driver that runs none, null when not yet said.
    supported_instances = sa.Column(sa.Text, nullable=True)


class Instance(Base):
    __tablename__ = 'instances'
    __table_args__ = (
        sa.UniqueConstraint('uuid', name='uniq_instances0uuid'),
        sa.Index('instances_host_deleted_idx', 'host', 'deleted'),
        sa.Index('instances_project_id_deleted_idx', 'project_id',
                 'deleted'),
        sa.Index('instances_created_at_id_idx', 'created_at', 'id'),
        sa.Index('instances_task_state_updated_at_idx', 'task_state',
                 'updated_at'),
    )

    id = sa.Column(sa.Integer, primary_key=True)
    uuid = sa.Column(sa.String(36), nullable=False)
    display_name = sa.Column(sa.String(255), nullable=True)
    host = sa.Column(sa.String(255), nullable=True)
    node = sa.Column(sa.String(255), nullable=True)
    vm_state = sa.Column(sa.String(255), nullable=True)
    power_state = sa.Column(sa.Integer, nullable=True)
    task_state = sa.Column(sa.String(255), nullable=True)
    project_id = sa.Column(sa.String(255), nullable=True)
    user_id = sa.Column(sa.String(255), nullable=True)
    display_description = sa.Column(sa.Text, nullable=True)
    instance_type_id = sa.Column(sa.Integer, nullable=True)
    # The flavor the instance was built with, as JSON: Nova keeps a copy
    # with the instance, so a later change of the flavor changes nothing.
    flavor = sa.Column(sa.Text, nullable=True)
    image_ref = sa.Column(sa.String(255), nullable=True)
    hostname = sa.Column(sa.String(255), nullable=True)
    key_name = sa.Column(sa.String(255), nullable=True)
    launched_at = sa.Column(sa.DateTime, nullable=True)
    terminated_at = sa.Column(sa.DateTime, nullable=True)
    availability_zone = sa.Column(sa.String(255), nullable=True)
    locked_by = sa.Column(sa.String(255), nullable=True)
    locked_reason = sa.Column(sa.Text, nullable=True)
    progress = sa.Column(sa.Integer, nullable=True)
    access_ip_v4 = sa.Column(sa.String(39), nullable=True)
    access_ip_v6 = sa.Column(sa.String(39), nullable=True)
    config_drive = sa.Column(sa.String(255), nullable=True)
    # The user's key/value metadata, as a JSON object (NULL: none).
    user_metadata = sa.Column(sa.Text, nullable=True)
    # What the server takes of its host, from its flavor.
    vcpus = sa.Column(sa.Integer, nullable=True)
    memory_mb = sa.Column(sa.Integer, nullable=True)
    root_gb = sa.Column(sa.Integer, nullable=True)
    ephemeral_gb = sa.Column(sa.Integer, nullable=True)
    # The request that built it ("r-" and 8 characters) and its root disk.
    reservation_id = sa.Column(sa.String(255), nullable=True)
    root_device_name = sa.Column(sa.String(255), nullable=True)
    # Its image's properties, {"image_<property>": value}, as JSON.
    system_metadata = sa.Column(sa.Text, nullable=True)
    # Its ports' addresses: a JSON list of {network, address, version,
    # type, mac_address}.
    network_info = sa.Column(sa.Text, nullable=True)
    # The user data given at create, base64 as sent (up to 65535
    # characters, beyond TEXT on MariaDB).
    user_data = sa.Column(MEDIUM_TEXT, nullable=True)


class Tag(ModelBase):
    """A server's tag, as Nova's: a resource's uuid and a tag, once each.

    No timestamps and no soft delete: a server's tags are deleted with it.
    """
    __tablename__ = 'tags'
    __table_args__ = (
        sa.Index('tags_tag_idx', 'tag'),
    )

    resource_id = sa.Column(sa.String(36), primary_key=True, nullable=False)
    tag = sa.Column(sa.String(80), primary_key=True, nullable=False)


class InstanceAction(Base):
    """A request that acted on a server: the start of its history."""
    __tablename__ = 'instance_actions'
    __table_args__ = (
        sa.Index('instance_uuid_idx', 'instance_uuid'),
        sa.Index('request_id_idx', 'request_id'),
    )

    id = sa.Column(sa.Integer, primary_key=True)
    action = sa.Column(sa.String(255), nullable=True)
    instance_uuid = sa.Column(sa.String(36), nullable=True)
    request_id = sa.Column(sa.String(255), nullable=True)
    user_id = sa.Column(sa.String(255), nullable=True)
    project_id = sa.Column(sa.String(255), nullable=True)
    start_time = sa.Column(sa.DateTime, nullable=True)
    finish_time = sa.Column(sa.DateTime, nullable=True)
    message = sa.Column(sa.String(255), nullable=True)


class InstanceActionEvent(Base):
    """A step a compute host carried out for an action, and its result."""
    __tablename__ = 'instance_actions_events'
    __table_args__ = (
        sa.Index('instance_actions_events_action_id_idx', 'action_id'),
    )

    id = sa.Column(sa.Integer, primary_key=True)
    event = sa.Column(sa.String(255), nullable=True)
    action_id = sa.Column(sa.Integer, sa.ForeignKey('instance_actions.id'),
                          nullable=True)
    start_time = sa.Column(sa.DateTime, nullable=True)
    finish_time = sa.Column(sa.DateTime, nullable=True)
    result = sa.Column(sa.String(255), nullable=True)
    traceback = sa.Column(sa.Text, nullable=True)
    host = sa.Column(sa.String(255), nullable=True)
    details = sa.Column(sa.Text, nullable=True)


class InstanceFault(Base):
    """What went wrong with a server: shown while it is in error."""
    __tablename__ = 'instance_faults'
    __table_args__ = (
        sa.Index('instance_faults_instance_uuid_deleted_created_at_idx',
                 'instance_uuid', 'deleted', 'created_at'),
    )

    id = sa.Column(sa.Integer, primary_key=True)
    instance_uuid = sa.Column(sa.String(36), nullable=True)
    code = sa.Column(sa.Integer, nullable=False)
    message = sa.Column(sa.String(255), nullable=True)
    details = sa.Column(sa.Text, nullable=True)
    host = sa.Column(sa.String(255), nullable=True)


class Migration(Base):
    """A move of a server from one host to another: evacuations here."""
    __tablename__ = 'migrations'
    __table_args__ = (
        sa.UniqueConstraint('uuid', name='uniq_migrations0uuid'),
        sa.Index('migrations_instance_uuid_and_status_idx', 'deleted',
                 'instance_uuid', 'status'),
        sa.Index('migrations_source_compute_status_idx', 'deleted',
                 'source_compute', 'status'),
        sa.Index('migrations_dest_compute_status_idx', 'deleted',
                 'dest_compute', 'status'),
        sa.Index('migrations_updated_at_idx', 'updated_at'),
    )

    id = sa.Column(sa.Integer, primary_key=True)
    uuid = sa.Column(sa.String(36), nullable=True)
    source_compute = sa.Column(sa.String(255), nullable=True)
    source_node = sa.Column(sa.String(255), nullable=True)
    dest_compute = sa.Column(sa.String(255), nullable=True)
    dest_node = sa.Column(sa.String(255), nullable=True)
    dest_host = sa.Column(sa.String(255), nullable=True)
    status = sa.Column(sa.String(255), nullable=True)
    instance_uuid = sa.Column(sa.String(36), nullable=True)
    old_instance_type_id = sa.Column(sa.Integer, nullable=True)
    new_instance_type_id = sa.Column(sa.Integer, nullable=True)
    migration_type = sa.Column(sa.String(255), nullable=True)
    hidden = sa.Column(sa.Boolean, nullable=True)
    user_id = sa.Column(sa.String(255), nullable=True)
    project_id = sa.Column(sa.String(255), nullable=True)
    # The vm_state an evacuated server ends in (the project's own column).
    target_vm_state = sa.Column(sa.String(255), nullable=True)


class Aggregate(ApiTableBase):
    __tablename__ = 'aggregates'
    __table_args__ = (
        sa.UniqueConstraint('uuid', name='uniq_aggregates0uuid'),
        sa.UniqueConstraint('name', name='uniq_aggregates0name'),
    )

    id = sa.Column(sa.Integer, primary_key=True)
    uuid = sa.Column(sa.String(36), nullable=False)
    name = sa.Column(sa.String(255), nullable=False)


class AggregateHost(ApiTableBase):
    __tablename__ = 'aggregate_hosts'
    __table_args__ = (
        sa.UniqueConstraint('host', 'aggregate_id',
                            name='uniq_aggregate_hosts0host0aggregate_id'),
        sa.Index('aggregate_hosts_aggregate_id_idx', 'aggregate_id'),
    )

    id = sa.Column(sa.Integer, primary_key=True)
    host = sa.Column(sa.String(255), nullable=False)
    aggregate_id = sa.Column(sa.Integer, sa.ForeignKey('aggregates.id'),
                             nullable=False)


# The metadata key that makes an aggregate an availability zone.
AZ_KEY = 'availability_zone'


class AggregateMetadata(ApiTableBase):
    __tablename__ = 'aggregate_metadata'
    __table_args__ = (
        sa.UniqueConstraint('aggregate_id', 'key',
                            name='uniq_aggregate_metadata0aggregate_id0key'),
        sa.Index('aggregate_metadata_key_idx', 'key'),
    )

    id = sa.Column(sa.Integer, primary_key=True)
    aggregate_id = sa.Column(sa.Integer, sa.ForeignKey('aggregates.id'),
                             nullable=False)
    key = sa.Column(sa.String(255), nullable=False)
    value = sa.Column(sa.String(255), nullable=False)


class Flavor(ApiTableBase):
    __tablename__ = 'flavors'
    __table_args__ = (
        sa.UniqueConstraint('flavorid', name='uniq_flavors0flavorid'),
        sa.UniqueConstraint('name', name='uniq_flavors0name'),
    )

    id = sa.Column(sa.Integer, primary_key=True)
    flavorid = sa.Column(sa.String(255), nullable=False)
    name = sa.Column(sa.String(255), nullable=False)
    memory_mb = sa.Column(sa.Integer, nullable=False)
    vcpus = sa.Column(sa.Integer, nullable=False)
    root_gb = sa.Column(sa.Integer, nullable=False)
    ephemeral_gb = sa.Column(sa.Integer, nullable=False, default=0)
    swap = sa.Column(sa.Integer, nullable=False, default=0)
    rxtx_factor = sa.Column(sa.Float, nullable=True, default=1.0)
    vcpu_weight = sa.Column(sa.Integer, nullable=True)
    disabled = sa.Column(sa.Boolean, nullable=False, default=False)
    is_public = sa.Column(sa.Boolean, nullable=False, default=True)
    description = sa.Column(sa.Text, nullable=True)


class FlavorExtraSpec(ApiTableBase):
    __tablename__ = 'flavor_extra_specs'
    __table_args__ = (
        sa.UniqueConstraint('flavor_id', 'key',
                            name='uniq_flavor_extra_specs0flavor_id0key'),
        sa.Index('flavor_extra_specs_flavor_id_key_idx', 'flavor_id', 'key'),
    )

    id = sa.Column(sa.Integer, primary_key=True)
    flavor_id = sa.Column(sa.Integer, sa.ForeignKey('flavors.id'),
                          nullable=False)
    key = sa.Column(sa.String(255), nullable=False)
    value = sa.Column(sa.String(255), nullable=True)


class FlavorProject(ApiTableBase):
    """A project that may use a private flavor."""
    __tablename__ = 'flavor_projects'
    __table_args__ = (
        sa.UniqueConstraint('flavor_id', 'project_id',
                            name='uniq_flavor_projects0flavor_id0project_id'),
    )

    id = sa.Column(sa.Integer, primary_key=True)
    flavor_id = sa.Column(sa.Integer, sa.ForeignKey('flavors.id'),
                          nullable=False)
    project_id = sa.Column(sa.String(255), nullable=False)


class ServiceHistory(ApiTableBase):
    """One admin change of a host's service: who, when, which request, what.

    ``changes`` is a JSON list of ``{"field", "old", "new"}``. Rows are
    never soft-deleted, and outlive the service: an audit trail.
    """
    __tablename__ = 'service_history'
    __table_args__ = (
        sa.Index('service_history_host_binary_id_idx', 'host', 'binary',
                 'id'),
    )

    id = sa.Column(sa.Integer, primary_key=True)
    host = sa.Column(sa.String(255), nullable=False)
    binary = sa.Column(sa.String(255), nullable=False)
    service_uuid = sa.Column(sa.String(36), nullable=True)
    event = sa.Column(sa.String(255), nullable=False)
    changes = sa.Column(sa.Text, nullable=False)
    user_id = sa.Column(sa.String(255), nullable=True)
    project_id = sa.Column(sa.String(255), nullable=True)
    request_id = sa.Column(sa.String(255), nullable=True)
