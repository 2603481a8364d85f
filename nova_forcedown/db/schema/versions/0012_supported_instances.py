"""Add compute_nodes.supported_instances: the kinds of server a node runs.

As in Nova, a JSON list of [architecture, hypervisor type, mode]
triples. A node whose driver runs no server (the local driver, which only
reports the machine) writes ``[]`` and is never a destination of an
evacuation; existing rows get null (not yet said: taken as able), until
their agent next writes its resources.

Revision ID: 0012_supported_instances
Revises: 0011_server_details
"""

from alembic import op
import sqlalchemy as sa

revision = '0012_supported_instances'
down_revision = '0011_server_details'
branch_labels = None
depends_on = None


def upgrade():
    with op.batch_alter_table('compute_nodes') as batch:
        batch.add_column(sa.Column('supported_instances', sa.Text,
                                   nullable=True))
