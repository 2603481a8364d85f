"""Keep a server's user data and tags, which a create used to drop.

``instances.user_data`` holds the base64 text given at create (Nova
allows 65535 characters: MEDIUMTEXT on MariaDB, as Nova's column, where
TEXT would stop at 65535 bytes). The new ``tags`` table is Nova's: a
server's uuid and a tag, the pair its primary key, an index on the tag
for the listing filters. Existing servers get no user data (null) and no
tag; no row changes.

Revision ID: 0013_user_data_and_tags
Revises: 0012_supported_instances
"""

from alembic import op
import sqlalchemy as sa
from sqlalchemy.dialects import mysql

revision = '0013_user_data_and_tags'
down_revision = '0012_supported_instances'
branch_labels = None
depends_on = None


def upgrade():
    with op.batch_alter_table('instances') as batch:
        batch.add_column(sa.Column(
            'user_data', sa.Text().with_variant(mysql.MEDIUMTEXT(), 'mysql'),
            nullable=True))
    op.create_table(
        'tags',
        sa.Column('resource_id', sa.String(36), primary_key=True,
                  nullable=False),
        sa.Column('tag', sa.String(80), primary_key=True, nullable=False),
        mysql_engine='InnoDB', mysql_charset='utf8mb4',
    )
    op.create_index('tags_tag_idx', 'tags', ['tag'])
