"""Instance actions: what was asked of a server, and what its host did.

``instance_actions`` has one row per request that acted on a server
(lock, unlock, resetState, stop, start, later evacuate), keyed for
readers by the request id, as Nova records them; ``instance_actions_events``
the steps a compute host carried out for it, with their result. The index
on ``instances.task_state`` lets each compute agent find the tasks
waiting for its hosts with one small query.

Revision ID: 0006_instance_actions
Revises: 0005_servers
"""

from alembic import op
import sqlalchemy as sa

revision = '0006_instance_actions'
down_revision = '0005_servers'
branch_labels = None
depends_on = None


def _soft_delete_columns():
    return [
        sa.Column('created_at', sa.DateTime, nullable=True),
        sa.Column('updated_at', sa.DateTime, nullable=True),
        sa.Column('deleted_at', sa.DateTime, nullable=True),
        sa.Column('deleted', sa.Integer, nullable=True),
    ]


def upgrade():
    op.create_table(
        'instance_actions',
        sa.Column('id', sa.Integer, primary_key=True),
        sa.Column('action', sa.String(255), nullable=True),
        sa.Column('instance_uuid', sa.String(36), nullable=True),
        sa.Column('request_id', sa.String(255), nullable=True),
        sa.Column('user_id', sa.String(255), nullable=True),
        sa.Column('project_id', sa.String(255), nullable=True),
        sa.Column('start_time', sa.DateTime, nullable=True),
        sa.Column('finish_time', sa.DateTime, nullable=True),
        sa.Column('message', sa.String(255), nullable=True),
        *_soft_delete_columns())
    op.create_index('instance_uuid_idx', 'instance_actions',
                    ['instance_uuid'])
    op.create_index('request_id_idx', 'instance_actions', ['request_id'])
    op.create_table(
        'instance_actions_events',
        sa.Column('id', sa.Integer, primary_key=True),
        sa.Column('event', sa.String(255), nullable=True),
        sa.Column('action_id', sa.Integer,
                  sa.ForeignKey('instance_actions.id'), nullable=True),
        sa.Column('start_time', sa.DateTime, nullable=True),
        sa.Column('finish_time', sa.DateTime, nullable=True),
        sa.Column('result', sa.String(255), nullable=True),
        sa.Column('traceback', sa.Text, nullable=True),
        sa.Column('host', sa.String(255), nullable=True),
        sa.Column('details', sa.Text, nullable=True),
        *_soft_delete_columns())
    op.create_index('instance_actions_events_action_id_idx',
                    'instance_actions_events', ['action_id'])
    op.create_index('instances_task_state_updated_at_idx', 'instances',
                    ['task_state', 'updated_at'])
