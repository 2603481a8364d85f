"""Add services.rpc_server: the RPC server a compute host's agent listens as.

The API casts a host's tasks to ``compute.<rpc_server>``: the host itself
when its agent serves it alone, as in Nova; the agent's first host when
one agent serves many simulated hosts. Existing rows get null, read as
the host itself.

Revision ID: 0009_services_rpc_server
Revises: 0008_migrations
"""

from alembic import op
import sqlalchemy as sa

revision = '0009_services_rpc_server'
down_revision = '0008_migrations'
branch_labels = None
depends_on = None


def upgrade():
    with op.batch_alter_table('services') as batch:
        batch.add_column(sa.Column('rpc_server', sa.String(255),
                                   nullable=True))
