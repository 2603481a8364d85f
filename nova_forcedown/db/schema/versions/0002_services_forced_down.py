"""Add services.forced_down, the mark-host-down flag.

Existing rows get false: no service was forced down before this revision.

Revision ID: 0002_services_forced_down
Revises: 0001_initial
"""

from alembic import op
import sqlalchemy as sa

revision = '0002_services_forced_down'
down_revision = '0001_initial'
branch_labels = None
depends_on = None


def upgrade():
    with op.batch_alter_table('services') as batch:
        batch.add_column(sa.Column('forced_down', sa.Boolean, nullable=False,
                                   server_default=sa.false()))
