"""Schema migrations with alembic: sync, version, and the migrated check.

Also how a server process readies its database before it serves.
"""

import os

from alembic import command as alembic_command
from alembic import config as alembic_config
from alembic import migration as alembic_migration
from alembic import script as alembic_script
from alembic import util as alembic_util
import fasteners
import sqlalchemy as sa

from nova_forcedown.db import engine as db_engine
from nova_forcedown import exception

MIGRATIONS_DIR = os.path.dirname(__file__)


def _alembic_config(connection):
    config = alembic_config.Config()
    config.set_main_option('script_location', MIGRATIONS_DIR)
    config.attributes['connection'] = connection
    return config


def _scripts():
    config = alembic_config.Config()
    config.set_main_option('script_location', MIGRATIONS_DIR)
    return alembic_script.ScriptDirectory.from_config(config)


def head_revision():
    return _scripts().get_current_head()


def db_sync(engine=None, revision='head'):
    """Upgrade the schema to ``revision``; a no-op when already there.

    DatabaseNewerThanCode when a newer release migrated it;
    SchemaRevisionRefused for a ``revision`` this release cannot go to.
    """
    engine = engine or db_engine.get_engine()
    with engine.begin() as connection:
        _check_known(_current_revision(connection), _scripts(),
                     _shown_url(engine))
        try:
            alembic_command.upgrade(_alembic_config(connection), revision)
        except alembic_util.CommandError as exc:
            raise exception.SchemaRevisionRefused(
                revision=revision,
                reason=exception.first_line(exc).rstrip('.'))


def db_version(engine=None):
    """The revision the database is at, or None for an empty database."""
    engine = engine or db_engine.get_engine()
    with engine.connect() as connection:
        return _current_revision(connection)


def _current_revision(connection):
    context = alembic_migration.MigrationContext.configure(connection)
    return context.get_current_revision()


def _check_known(current, scripts, url):
    """Raise DatabaseNewerThanCode for a revision ``scripts`` lack."""
    if current is None:
        return
    if current not in {script.revision for script in scripts.walk_revisions()}:
        raise exception.DatabaseNewerThanCode(
            url=url, revision=current, head=scripts.get_current_head())


def _shown_url(engine):
    return engine.url.render_as_string(hide_password=True)


def check_migrated(engine=None):
    """Raise DatabaseNotMigrated unless the schema is at the head revision.

    DatabaseNewerThanCode when a newer release migrated it: db sync would
    not help, upgrading this code would.
    """
    engine = engine or db_engine.get_engine()
    url = _shown_url(engine)
    try:
        current = db_version(engine)
    except sa.exc.OperationalError as exc:
        raise exception.DatabaseUnavailable(reason=exception.first_line(exc))
    if current is None:
        raise exception.DatabaseNotMigrated(url=url, reason='empty database')
    scripts = _scripts()
    _check_known(current, scripts, url)
    head = scripts.get_current_head()
    if current != head:
        raise exception.DatabaseNotMigrated(
            url=url, reason='at revision %s, code expects %s' % (current,
                                                                 head))


def sync_on_startup(conf, engine=None):
    """:func:`db_sync`, one process of this machine at a time.

    gunicorn's workers (and an agent started beside them) each migrate at
    start: two that read an empty schema at once would both create it,
    and the second would fail. A file lock under ``state_path`` makes
    them take turns; the second then finds the schema migrated.
    """
    os.makedirs(conf.state_path, exist_ok=True)
    lock = fasteners.InterProcessLock(
        os.path.join(conf.state_path, 'nova_forcedown-db-sync.lock'))
    with lock:
        db_sync(engine)


def prepare(conf):
    """Ready the database for a server: migrate or insist it is migrated.

    With ``[database] sync_on_startup`` the schema is migrated to the head
    revision; otherwise DatabaseNotMigrated is raised unless it is there.
    """
    db_engine.configure(conf)
    engine = db_engine.get_engine()
    if conf.database.sync_on_startup:
        sync_on_startup(conf, engine)
    else:
        check_migrated(engine)
    # Workers fork from this process: none may inherit its connections.
    engine.dispose()
