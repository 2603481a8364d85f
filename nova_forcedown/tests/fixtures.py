"""Test fixtures: private configuration and real databases.

Database tests run on SQLite, PostgreSQL and MariaDB through oslo.db's
opportunistic fixtures: each backend gets a freshly provisioned database,
built with the project's own migrations. PostgreSQL and MariaDB tests skip
when the server is absent, unless NOVA_FORCEDOWN_REQUIRE_DATABASES is set
(as CI does), in which case they fail.
"""

import os

import fixtures
from oslo_db.sqlalchemy import test_fixtures
from oslotest import base
import sqlalchemy as sa

from nova_forcedown import conf as nf_conf
from nova_forcedown import context
from nova_forcedown.db import api as db_api
from nova_forcedown.db import migration
from nova_forcedown.db import models
from nova_forcedown import objects

objects.register_all()


class ConfFixture(fixtures.Fixture):
    """A private ConfigOpts that reads no file from the machine."""

    def __init__(self, args=None, **defaults):
        super().__init__()
        self._args = args or []
        self._defaults = defaults

    def _setUp(self):
        self.conf = nf_conf.make_conf(self._args, default_config_files=[],
                                      default_config_dirs=[])
        for name, value in self._defaults.items():
            group, _, option = name.rpartition('__')
            self.conf.set_override(option, value, group=group or None)
        self.addCleanup(self.conf.reset)


class _ProjectSchema(test_fixtures.GeneratesSchemaFromMigrations,
                     test_fixtures.DeletesFromSchema):
    """Schema from our alembic migrations, rows wiped between tests."""

    def get_enginefacade(self):
        return db_api.context_manager

    def generate_schema_migrations(self, engine):
        migration.db_sync(engine)

    def delete_from_schema(self, engine):
        with engine.begin() as connection:
            for table in reversed(models.Base.metadata.sorted_tables):
                connection.execute(table.delete())


class SqliteFixture(_ProjectSchema, test_fixtures.OpportunisticDbFixture):
    DRIVER = 'sqlite'


class PostgresqlFixture(_ProjectSchema,
                        test_fixtures.PostgresqlOpportunisticFixture):
    pass


class MySQLFixture(_ProjectSchema, test_fixtures.MySQLOpportunisticFixture):
    pass


class DbTestCase(test_fixtures.OpportunisticDBTestMixin, base.BaseTestCase):
    """A test on a real, migrated database; SQLite unless a subclass says.

    ``self.context`` is an admin context, ``self.engine`` the engine under
    test.
    """

    FIXTURE = SqliteFixture
    SKIP_ON_UNAVAILABLE_DB = not os.environ.get(
        'NOVA_FORCEDOWN_REQUIRE_DATABASES')

    def setUp(self):
        super().setUp()
        self.context = context.get_admin_context()
        self.engine = db_api.get_engine()


class PostgresqlMixin:
    FIXTURE = PostgresqlFixture


class MySQLMixin:
    FIXTURE = MySQLFixture


def backend_test_cases(test_mixin, module_globals):
    """Define ``<Mixin>Sqlite``, ``...PostgreSQL`` and ``...MySQL`` cases.

    ``test_mixin`` holds the tests; each generated class runs them on one
    backend. Call it at module level with ``globals()``.
    """
    base_name = test_mixin.__name__.replace('Mixin', '').rstrip('_')
    for suffix, bases in (('Sqlite', (DbTestCase,)),
                          ('PostgreSQL', (PostgresqlMixin, DbTestCase)),
                          ('MySQL', (MySQLMixin, DbTestCase))):
        name = base_name + suffix
        cls = type(name, (test_mixin,) + bases,
                   {'__module__': module_globals['__name__']})
        module_globals[name] = cls


def count_statements(engine):
    """Fixture-free counter of SQL statements run on ``engine``.

    Returns a list that grows by one per statement; detach with
    ``sa.event.remove(engine, 'before_cursor_execute', listener)``.
    """
    statements = []

    def listener(conn, cursor, statement, parameters, context, executemany):
        statements.append(statement)

    sa.event.listen(engine, 'before_cursor_execute', listener)
    return statements, listener
