"""Instances grow what a server view and its filters need.

The owner (project and user), the flavor the instance was built with (its
id and a JSON copy of its values, as Nova keeps one with the instance, so
a flavor deleted later still describes it), the image, the names, the
launch and termination times, the zone asked for, the lock, the progress,
the access addresses, the config drive and the user's metadata (JSON).

Existing rows belong to no project yet, are not locked, have no config
drive and no metadata (NULL, shown as empty) and, when active, were
launched when they were created. Their flavor copy is
the one every server of the fake driver had until now (2 VCPUs, 4 GiB,
40 GB), the only driver that made instances before this revision.

Revision ID: 0005_servers
Revises: 0004_flavors
"""

import json

from alembic import op
import sqlalchemy as sa

revision = '0005_servers'
down_revision = '0004_flavors'
branch_labels = None
depends_on = None

# Frozen here: what the fake driver's servers were built with so far.
_FAKE_DRIVER_FLAVOR = {
    'flavorid': 'fake.small', 'name': 'fake.small', 'memory_mb': 4096,
    'vcpus': 2, 'root_gb': 40, 'ephemeral_gb': 0, 'swap': 0,
    'extra_specs': {}}


def _new_columns():
    return [
        sa.Column('project_id', sa.String(255), nullable=True),
        sa.Column('user_id', sa.String(255), nullable=True),
        sa.Column('display_description', sa.Text, nullable=True),
        sa.Column('instance_type_id', sa.Integer, nullable=True),
        sa.Column('flavor', sa.Text, nullable=True),
        sa.Column('image_ref', sa.String(255), nullable=True),
        sa.Column('hostname', sa.String(255), nullable=True),
        sa.Column('key_name', sa.String(255), nullable=True),
        sa.Column('launched_at', sa.DateTime, nullable=True),
        sa.Column('terminated_at', sa.DateTime, nullable=True),
        sa.Column('availability_zone', sa.String(255), nullable=True),
        sa.Column('locked_by', sa.String(255), nullable=True),
        sa.Column('locked_reason', sa.Text, nullable=True),
        sa.Column('progress', sa.Integer, nullable=True),
        sa.Column('access_ip_v4', sa.String(39), nullable=True),
        sa.Column('access_ip_v6', sa.String(39), nullable=True),
        sa.Column('config_drive', sa.String(255), nullable=True),
        sa.Column('user_metadata', sa.Text, nullable=True),
    ]


def upgrade():
    with op.batch_alter_table('instances') as batch:
        for column in _new_columns():
            batch.add_column(column)
        batch.create_index('instances_project_id_deleted_idx',
                           ['project_id', 'deleted'])
        batch.create_index('instances_created_at_id_idx',
                           ['created_at', 'id'])
    op.execute("UPDATE instances SET launched_at = created_at "
               "WHERE vm_state = 'active' AND launched_at IS NULL")
    instances = sa.table('instances', sa.column('flavor', sa.Text))
    op.execute(instances.update().where(instances.c.flavor.is_(None))
               .values(flavor=json.dumps(_FAKE_DRIVER_FLAVOR,
                                         sort_keys=True)))
