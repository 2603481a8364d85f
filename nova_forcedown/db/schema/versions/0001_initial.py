"""Initial schema: services, compute nodes and instances, before forced_down.

Revision ID: 0001_initial
Revises:
"""

from alembic import op
import sqlalchemy as sa

revision = '0001_initial'
down_revision = None
branch_labels = None
depends_on = None


def _timestamps_and_soft_delete():
    return [
        sa.Column('created_at', sa.DateTime, nullable=True),
        sa.Column('updated_at', sa.DateTime, nullable=True),
        sa.Column('deleted_at', sa.DateTime, nullable=True),
        sa.Column('deleted', sa.Integer, nullable=True),
    ]


def upgrade():
    op.create_table(
        'services',
        sa.Column('id', sa.Integer, primary_key=True),
        sa.Column('uuid', sa.String(36), nullable=True),
        sa.Column('host', sa.String(255), nullable=False),
        sa.Column('binary', sa.String(255), nullable=False),
        sa.Column('topic', sa.String(255), nullable=True),
        sa.Column('report_count', sa.Integer, nullable=False),
        sa.Column('disabled', sa.Boolean, nullable=False),
        sa.Column('disabled_reason', sa.String(255), nullable=True),
        sa.Column('last_seen_up', sa.DateTime, nullable=True),
        sa.Column('version', sa.Integer, nullable=False),
        sa.Column('availability_zone', sa.String(255), nullable=True),
        *_timestamps_and_soft_delete(),
        sa.UniqueConstraint('host', 'binary', 'deleted',
                            name='uniq_services0host0binary0deleted'),
        sa.UniqueConstraint('uuid', name='uniq_services0uuid'),
        mysql_engine='InnoDB', mysql_charset='utf8mb4',
    )
    op.create_index('services_binary_deleted_idx', 'services',
                    ['binary', 'deleted'])

    op.create_table(
        'compute_nodes',
        sa.Column('id', sa.Integer, primary_key=True),
        sa.Column('uuid', sa.String(36), nullable=False),
        sa.Column('service_id', sa.Integer, nullable=True),
        sa.Column('host', sa.String(255), nullable=True),
        sa.Column('hypervisor_hostname', sa.String(255), nullable=True),
        sa.Column('hypervisor_type', sa.String(255), nullable=False),
        sa.Column('hypervisor_version', sa.Integer, nullable=False),
        sa.Column('host_ip', sa.String(39), nullable=True),
        sa.Column('cpu_info', sa.Text, nullable=False),
        sa.Column('vcpus', sa.Integer, nullable=False),
        sa.Column('memory_mb', sa.Integer, nullable=False),
        sa.Column('local_gb', sa.Integer, nullable=False),
        sa.Column('vcpus_used', sa.Integer, nullable=False),
        sa.Column('memory_mb_used', sa.Integer, nullable=False),
        sa.Column('local_gb_used', sa.Integer, nullable=False),
        sa.Column('free_ram_mb', sa.Integer, nullable=True),
        sa.Column('free_disk_gb', sa.Integer, nullable=True),
        sa.Column('current_workload', sa.Integer, nullable=True),
        sa.Column('running_vms', sa.Integer, nullable=True),
        sa.Column('disk_available_least', sa.Integer, nullable=True),
        sa.Column('stats', sa.Text, nullable=True),
        *_timestamps_and_soft_delete(),
        sa.UniqueConstraint('uuid', name='uniq_compute_nodes0uuid'),
        mysql_engine='InnoDB', mysql_charset='utf8mb4',
    )
    op.create_index('compute_nodes_service_id_idx', 'compute_nodes',
                    ['service_id'])
    op.create_index('compute_nodes_host_deleted_idx', 'compute_nodes',
                    ['host', 'deleted'])
    op.create_index('compute_nodes_hypervisor_hostname_idx', 'compute_nodes',
                    ['hypervisor_hostname'])

    op.create_table(
        'instances',
        sa.Column('id', sa.Integer, primary_key=True),
        sa.Column('uuid', sa.String(36), nullable=False),
        sa.Column('display_name', sa.String(255), nullable=True),
        sa.Column('host', sa.String(255), nullable=True),
        sa.Column('node', sa.String(255), nullable=True),
        sa.Column('vm_state', sa.String(255), nullable=True),
        sa.Column('power_state', sa.Integer, nullable=True),
        sa.Column('task_state', sa.String(255), nullable=True),
        *_timestamps_and_soft_delete(),
        sa.UniqueConstraint('uuid', name='uniq_instances0uuid'),
        mysql_engine='InnoDB', mysql_charset='utf8mb4',
    )
    op.create_index('instances_host_deleted_idx', 'instances',
                    ['host', 'deleted'])
