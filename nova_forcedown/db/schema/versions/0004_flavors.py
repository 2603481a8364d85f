"""Flavors, their extra specs and the projects of private flavors.

Rows are deleted, not soft-deleted, as in Nova's API database. The
instances learn their flavor in a later revision.

Revision ID: 0004_flavors
Revises: 0003_aggregates
"""

from alembic import op
import sqlalchemy as sa

revision = '0004_flavors'
down_revision = '0003_aggregates'
branch_labels = None
depends_on = None


def _timestamps():
    return [sa.Column('created_at', sa.DateTime, nullable=True),
            sa.Column('updated_at', sa.DateTime, nullable=True)]


def upgrade():
    op.create_table(
        'flavors',
        sa.Column('id', sa.Integer, primary_key=True),
        sa.Column('flavorid', sa.String(255), nullable=False),
        sa.Column('name', sa.String(255), nullable=False),
        sa.Column('memory_mb', sa.Integer, nullable=False),
        sa.Column('vcpus', sa.Integer, nullable=False),
        sa.Column('root_gb', sa.Integer, nullable=False),
        sa.Column('ephemeral_gb', sa.Integer, nullable=False),
        sa.Column('swap', sa.Integer, nullable=False),
        sa.Column('rxtx_factor', sa.Float, nullable=True),
        sa.Column('vcpu_weight', sa.Integer, nullable=True),
        sa.Column('disabled', sa.Boolean, nullable=False),
        sa.Column('is_public', sa.Boolean, nullable=False),
        sa.Column('description', sa.Text, nullable=True),
        *_timestamps(),
        sa.UniqueConstraint('flavorid', name='uniq_flavors0flavorid'),
        sa.UniqueConstraint('name', name='uniq_flavors0name'),
        mysql_engine='InnoDB', mysql_charset='utf8mb4',
    )
    op.create_table(
        'flavor_extra_specs',
        sa.Column('id', sa.Integer, primary_key=True),
        sa.Column('flavor_id', sa.Integer, sa.ForeignKey('flavors.id'),
                  nullable=False),
        sa.Column('key', sa.String(255), nullable=False),
        sa.Column('value', sa.String(255), nullable=True),
        *_timestamps(),
        sa.UniqueConstraint('flavor_id', 'key',
                            name='uniq_flavor_extra_specs0flavor_id0key'),
        mysql_engine='InnoDB', mysql_charset='utf8mb4',
    )
    op.create_index('flavor_extra_specs_flavor_id_key_idx',
                    'flavor_extra_specs', ['flavor_id', 'key'])
    op.create_table(
        'flavor_projects',
        sa.Column('id', sa.Integer, primary_key=True),
        sa.Column('flavor_id', sa.Integer, sa.ForeignKey('flavors.id'),
                  nullable=False),
        sa.Column('project_id', sa.String(255), nullable=False),
        *_timestamps(),
        sa.UniqueConstraint('flavor_id', 'project_id',
                            name='uniq_flavor_projects0flavor_id0project_id'),
        mysql_engine='InnoDB', mysql_charset='utf8mb4',
    )
