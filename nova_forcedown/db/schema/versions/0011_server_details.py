"""Add a server's reservation, root device, image properties and addresses.

The server view shows them beyond its state.

``system_metadata`` holds the image properties copied when the server was
built (``image_<property>`` keys, as Nova's system metadata names them);
``network_info`` its ports' addresses, as JSON. Existing servers get
nulls: no reservation, no root device, no properties, no address.

Revision ID: 0011_server_details
Revises: 0010_instance_faults
"""

from alembic import op
import sqlalchemy as sa

revision = '0011_server_details'
down_revision = '0010_instance_faults'
branch_labels = None
depends_on = None


def upgrade():
    with op.batch_alter_table('instances') as batch:
        batch.add_column(sa.Column('reservation_id', sa.String(255),
                                   nullable=True))
        batch.add_column(sa.Column('root_device_name', sa.String(255),
                                   nullable=True))
        batch.add_column(sa.Column('system_metadata', sa.Text,
                                   nullable=True))
        batch.add_column(sa.Column('network_info', sa.Text, nullable=True))
