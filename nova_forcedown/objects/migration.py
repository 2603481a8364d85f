"""Migration: the record of a server's move, here always an evacuation.

Rows are :class:`nova_forcedown.db.migrations.MigrationRow` named tuples.
An evacuation's status moves only along
:data:`nova_forcedown.db.migrations.TRANSITIONS`: the API
accepts it (``accepted``, or ``error`` with no valid host), the
destination's agent rebuilds (``pre-migrating``, then ``done``, or
``failed``), the source's agent, back after its fence, removes its copy
(``completed``); a retry fails the evacuations it supersedes. The fencing
guide draws the whole machine.
"""

from nova_forcedown.db import engine as db_engine
from nova_forcedown.db import migrations as db_migrations

ACCEPTED = db_migrations.ACCEPTED
PRE_MIGRATING = db_migrations.PRE_MIGRATING
DONE = db_migrations.DONE
COMPLETED = db_migrations.COMPLETED
FAILED = db_migrations.FAILED
# Not yet cleaned up after by the source: it may still run a copy.
OPEN = db_migrations.OPEN

# Filters a listing matches exactly, by field.
EXACT_FILTERS = db_migrations.EXACT_FILTERS


def get_all(context, **filters):
    """Migrations as os-migrations lists them (see db.migrations)."""
    return db_migrations.migrations_get_all(context, **filters)


@db_engine.reader
def evacuations_under_way(context, host):
    """How many evacuations away from ``host`` are not yet rebuilt."""
    counts = db_migrations.open_evacuation_counts(context, host)
    return sum(count for status, count in counts.items() if status != DONE)


def move(context, migration_id, status):
    """Move a migration to ``status`` if its TRANSITIONS allow it; moved?

    False when another step got there first (a retry failed it, the
    source completed it).
    """
    return db_migrations.migration_set_status(context, migration_id, status)


@db_engine.writer
def complete(context, migrations):
    """Move the open ones of ``migrations`` to completed, in one transaction.

    Returns those moved, leaving out any another step moved first.
    """
    return [migration for migration in migrations
            if migration.status in OPEN and
            move(context, migration.id, COMPLETED)]


def latest_evacuation(context, instance_uuid, dest_compute):
    """The newest evacuation of the server to ``dest_compute``, or None."""
    return db_migrations.evacuation_get_latest(context, instance_uuid,
                                               dest_compute)


def open_evacuation_sources(context, instance_uuid):
    """The sources of the server's evacuations not yet rebuilt."""
    return db_migrations.open_evacuation_sources(context, instance_uuid)


def to_clean_up(context, hosts):
    """The evacuations a restarting agent of ``hosts`` looks at.

    Away from ``hosts`` and open or failed, and to ``hosts`` and failed:
    in each, one of ``hosts`` may hold a copy of a server that is no
    longer its own.
    """
    return db_migrations.evacuations_to_clean_up(context, hosts)


def evacuated_names(context, hosts):
    """The names of the servers that ever left ``hosts`` by evacuation."""
    return db_migrations.evacuated_names(context, hosts)
