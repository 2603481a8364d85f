"""Alembic environment: runs on the connection handed in by migration.py."""

from alembic import context

from nova_forcedown.db import models

target_metadata = models.Base.metadata


def run_migrations_online():
    connection = context.config.attributes['connection']
    context.configure(connection=connection, target_metadata=target_metadata,
                      render_as_batch=True, compare_type=True)
    with context.begin_transaction():
        context.run_migrations()


run_migrations_online()
