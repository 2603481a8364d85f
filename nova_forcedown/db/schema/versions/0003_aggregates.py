"""Host aggregates; availability zones move from services into them.

A zone is now an aggregate whose metadata holds ``availability_zone``, as
in Nova. Each zone that live compute services registered becomes such an
aggregate, named after the zone, holding those services' hosts; then the
services' own ``availability_zone`` column goes.

Revision ID: 0003_aggregates
Revises: 0002_services_forced_down
"""

from alembic import op
from oslo_utils import timeutils
from oslo_utils import uuidutils
import sqlalchemy as sa

revision = '0003_aggregates'
down_revision = '0002_services_forced_down'
branch_labels = None
depends_on = None

AZ_KEY = 'availability_zone'


def _timestamps():
    return [sa.Column('created_at', sa.DateTime, nullable=True),
            sa.Column('updated_at', sa.DateTime, nullable=True)]


def _create_tables():
    aggregates = op.create_table(
        'aggregates',
        sa.Column('id', sa.Integer, primary_key=True),
        sa.Column('uuid', sa.String(36), nullable=False),
        sa.Column('name', sa.String(255), nullable=False),
        *_timestamps(),
        sa.UniqueConstraint('uuid', name='uniq_aggregates0uuid'),
        sa.UniqueConstraint('name', name='uniq_aggregates0name'),
        mysql_engine='InnoDB', mysql_charset='utf8mb4',
    )
    hosts = op.create_table(
        'aggregate_hosts',
        sa.Column('id', sa.Integer, primary_key=True),
        sa.Column('host', sa.String(255), nullable=False),
        sa.Column('aggregate_id', sa.Integer, sa.ForeignKey('aggregates.id'),
                  nullable=False),
        *_timestamps(),
        sa.UniqueConstraint('host', 'aggregate_id',
                            name='uniq_aggregate_hosts0host0aggregate_id'),
        mysql_engine='InnoDB', mysql_charset='utf8mb4',
    )
    op.create_index('aggregate_hosts_aggregate_id_idx', 'aggregate_hosts',
                    ['aggregate_id'])
    metadata = op.create_table(
        'aggregate_metadata',
        sa.Column('id', sa.Integer, primary_key=True),
        sa.Column('aggregate_id', sa.Integer, sa.ForeignKey('aggregates.id'),
                  nullable=False),
        sa.Column('key', sa.String(255), nullable=False),
        sa.Column('value', sa.String(255), nullable=False),
        *_timestamps(),
        sa.UniqueConstraint('aggregate_id', 'key',
                            name='uniq_aggregate_metadata0aggregate_id0key'),
        mysql_engine='InnoDB', mysql_charset='utf8mb4',
    )
    op.create_index('aggregate_metadata_key_idx', 'aggregate_metadata',
                    ['key'])
    return aggregates, hosts, metadata


def _zones_of_services(connection):
    """{zone: [host, ...]} of live compute services that registered one."""
    services = sa.table('services', sa.column('host'), sa.column('topic'),
                        sa.column('availability_zone'), sa.column('deleted'))
    rows = connection.execute(
        sa.select(services.c.availability_zone, services.c.host)
        .where(services.c.deleted == 0, services.c.topic == 'compute',
               services.c.availability_zone.is_not(None),
               services.c.availability_zone != '')
        .distinct().order_by(services.c.availability_zone, services.c.host))
    zones = {}
    for zone, host in rows:
        zones.setdefault(zone, []).append(host)
    return zones


def _move_zones(connection, aggregates, hosts, metadata):
    now = timeutils.utcnow()
    for zone, members in _zones_of_services(connection).items():
        aggregate_id = connection.execute(
            aggregates.insert().values(uuid=uuidutils.generate_uuid(),
                                       name=zone, created_at=now)
        ).inserted_primary_key[0]
        connection.execute(metadata.insert().values(
            aggregate_id=aggregate_id, key=AZ_KEY, value=zone,
            created_at=now))
        connection.execute(hosts.insert(), [
            {'aggregate_id': aggregate_id, 'host': host, 'created_at': now}
            for host in members])


def upgrade():
    tables = _create_tables()
    _move_zones(op.get_bind(), *tables)
    with op.batch_alter_table('services') as batch:
        batch.drop_column('availability_zone')
