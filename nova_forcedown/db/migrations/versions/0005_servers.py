"""Instances grow what a server view and its filters need.

The owner (project and user), the flavor the instance was built with (its
id and a JSON copy of its values, as Nova keeps one with the instance, so
a flavor deleted later still describes it), the image, the names, the
launch and termination times, the zone asked for, the lock, the progress,
the access addresses, the config drive and the user's metadata (JSON).

Existing rows belong to no project yet, have no flavor copy, are not
locked, have no config drive and no metadata (NULL, shown as empty) and,
when active, were launched when they were created.

Revision ID: 0005_servers
Revises: 0004_flavors
"""

from alembic import op
import sqlalchemy as sa

revision = '0005_servers'
down_revision = '0004_flavors'
branch_labels = None
depends_on = None


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
