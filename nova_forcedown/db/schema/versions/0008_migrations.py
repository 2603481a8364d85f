"""Migrations (evacuations) and what each instance takes of its host.

``migrations`` has one row per move of a server, as Nova keeps them
(evacuations here), with the project's own ``target_vm_state``: the
vm_state the evacuated server ends in (stopped from microversion 2.95).
Instances keep the resources their flavor gives them (vcpus, memory_mb,
root_gb, ephemeral_gb), as Nova's instances do, so that a host's usage
is one SUM; existing rows take them from their flavor copy.

Revision ID: 0008_migrations
Revises: 0007_service_history
"""

import json

from alembic import op
import sqlalchemy as sa

revision = '0008_migrations'
down_revision = '0007_service_history'
branch_labels = None
depends_on = None

_RESOURCES = ('vcpus', 'memory_mb', 'root_gb', 'ephemeral_gb')


def upgrade():
    op.create_table(
        'migrations',
        sa.Column('id', sa.Integer, primary_key=True),
        sa.Column('uuid', sa.String(36), nullable=True),
        sa.Column('source_compute', sa.String(255), nullable=True),
        sa.Column('source_node', sa.String(255), nullable=True),
        sa.Column('dest_compute', sa.String(255), nullable=True),
        sa.Column('dest_node', sa.String(255), nullable=True),
        sa.Column('dest_host', sa.String(255), nullable=True),
        sa.Column('status', sa.String(255), nullable=True),
        sa.Column('instance_uuid', sa.String(36), nullable=True),
        sa.Column('old_instance_type_id', sa.Integer, nullable=True),
        sa.Column('new_instance_type_id', sa.Integer, nullable=True),
        sa.Column('migration_type', sa.String(255), nullable=True),
        sa.Column('hidden', sa.Boolean, nullable=True),
        sa.Column('user_id', sa.String(255), nullable=True),
        sa.Column('project_id', sa.String(255), nullable=True),
        sa.Column('target_vm_state', sa.String(255), nullable=True),
        sa.Column('created_at', sa.DateTime, nullable=True),
        sa.Column('updated_at', sa.DateTime, nullable=True),
        sa.Column('deleted_at', sa.DateTime, nullable=True),
        sa.Column('deleted', sa.Integer, nullable=True),
        sa.UniqueConstraint('uuid', name='uniq_migrations0uuid'))
    op.create_index('migrations_instance_uuid_and_status_idx', 'migrations',
                    ['deleted', 'instance_uuid', 'status'])
    op.create_index('migrations_source_compute_status_idx', 'migrations',
                    ['deleted', 'source_compute', 'status'])
    op.create_index('migrations_dest_compute_status_idx', 'migrations',
                    ['deleted', 'dest_compute', 'status'])
    op.create_index('migrations_updated_at_idx', 'migrations',
                    ['updated_at'])
    with op.batch_alter_table('instances') as batch:
        for name in _RESOURCES:
            batch.add_column(sa.Column(name, sa.Integer, nullable=True))
    _fill_resources()


def _fill_resources():
    """Each instance's resources, from the flavor copy it keeps."""
    instances = sa.table('instances', sa.column('id', sa.Integer),
                         sa.column('flavor', sa.Text),
                         *(sa.column(name, sa.Integer)
                           for name in _RESOURCES))
    connection = op.get_bind()
    rows = connection.execute(sa.select(instances.c.id, instances.c.flavor))
    for row_id, text in list(rows):
        flavor = json.loads(text) if text else {}
        connection.execute(instances.update().where(
            instances.c.id == row_id).values(
                **{name: flavor.get(name) for name in _RESOURCES}))
