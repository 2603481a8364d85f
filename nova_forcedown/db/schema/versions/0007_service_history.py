"""Service history: the audit trail of admin changes to a host's service.

One row per change (force-down and its clearing, disable, enable; later
evacuations and host-wide operations), with who asked (user and project),
when, the request id and what changed (a JSON list of field, old and new
value). Read per host and binary, newest first, by the index on (host,
binary, id).

Revision ID: 0007_service_history
Revises: 0006_instance_actions
"""

from alembic import op
import sqlalchemy as sa

revision = '0007_service_history'
down_revision = '0006_instance_actions'
branch_labels = None
depends_on = None


def upgrade():
    op.create_table(
        'service_history',
        sa.Column('id', sa.Integer, primary_key=True),
        sa.Column('host', sa.String(255), nullable=False),
        sa.Column('binary', sa.String(255), nullable=False),
        sa.Column('service_uuid', sa.String(36), nullable=True),
        sa.Column('event', sa.String(255), nullable=False),
        sa.Column('changes', sa.Text, nullable=False),
        sa.Column('user_id', sa.String(255), nullable=True),
        sa.Column('project_id', sa.String(255), nullable=True),
        sa.Column('request_id', sa.String(255), nullable=True),
        sa.Column('created_at', sa.DateTime, nullable=True),
        sa.Column('updated_at', sa.DateTime, nullable=True))
    op.create_index('service_history_host_binary_id_idx', 'service_history',
                    ['host', 'binary', 'id'])
