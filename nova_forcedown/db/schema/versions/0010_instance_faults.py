"""Instance faults: what went wrong with a server, as Nova keeps it.

One row per failure (an evacuation with no valid host, a rebuild or a
power action its driver could not carry out): an HTTP-like code, a
message and, for the failures of a host, the traceback. A server view
shows the newest while the server is in error.

Revision ID: 0010_instance_faults
Revises: 0009_services_rpc_server
"""

from alembic import op
import sqlalchemy as sa

revision = '0010_instance_faults'
down_revision = '0009_services_rpc_server'
branch_labels = None
depends_on = None


def upgrade():
    op.create_table(
        'instance_faults',
        sa.Column('id', sa.Integer, primary_key=True),
        sa.Column('instance_uuid', sa.String(36), nullable=True),
        sa.Column('code', sa.Integer, nullable=False),
        sa.Column('message', sa.String(255), nullable=True),
        sa.Column('details', sa.Text, nullable=True),
        sa.Column('host', sa.String(255), nullable=True),
        sa.Column('created_at', sa.DateTime, nullable=True),
        sa.Column('updated_at', sa.DateTime, nullable=True),
        sa.Column('deleted_at', sa.DateTime, nullable=True),
        sa.Column('deleted', sa.Integer, nullable=True))
    op.create_index('instance_faults_instance_uuid_deleted_created_at_idx',
                    'instance_faults',
                    ['instance_uuid', 'deleted', 'created_at'])
