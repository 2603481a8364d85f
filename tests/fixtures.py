"""Test fixtures: private configuration and real databases.

Database tests run on SQLite, PostgreSQL and MariaDB through oslo.db's
opportunistic fixtures: each backend gets a freshly provisioned database,
built with the project's own migrations. PostgreSQL and MariaDB tests skip
when the server is absent, unless NOVA_FORCEDOWN_REQUIRE_DATABASES is set
(as CI does), in which case they fail.
"""

import contextlib
import os

import fixtures
from oslo_db.sqlalchemy import test_fixtures
from oslotest import base
import sqlalchemy as sa

from nova_forcedown import conf as nf_conf
from nova_forcedown import context
from nova_forcedown.db import engine as db_engine
from nova_forcedown.db import models
from nova_forcedown.db import schema
from nova_forcedown import objects
from nova_forcedown.objects import compute_node as compute_node_obj
from nova_forcedown.objects import instance as instance_obj
from nova_forcedown.objects import service as service_obj
from tools.benchmark import statements as sql_statements

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


class _ProjectFacade:
    """Point oslo.db's fixtures at the project's transaction context."""

    def get_enginefacade(self):
        return db_engine.context_manager


class _ProjectSchema(_ProjectFacade,
                     test_fixtures.GeneratesSchemaFromMigrations,
                     test_fixtures.DeletesFromSchema):
    """Schema from our alembic migrations, rows wiped between tests."""

    def generate_schema_migrations(self, engine):
        schema.db_sync(engine)

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


class EmptySqliteFixture(_ProjectFacade,
                         test_fixtures.OpportunisticDbFixture):
    """An empty database, dropped after each test: for migration tests."""

    DRIVER = 'sqlite'


class EmptyPostgresqlFixture(_ProjectFacade,
                             test_fixtures.PostgresqlOpportunisticFixture):
    pass


class EmptyMySQLFixture(_ProjectFacade,
                        test_fixtures.MySQLOpportunisticFixture):
    pass


MIGRATED_FIXTURES = (('Sqlite', SqliteFixture),
                     ('PostgreSQL', PostgresqlFixture),
                     ('MySQL', MySQLFixture))
EMPTY_FIXTURES = (('Sqlite', EmptySqliteFixture),
                  ('PostgreSQL', EmptyPostgresqlFixture),
                  ('MySQL', EmptyMySQLFixture))


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
        self.engine = db_engine.get_engine()


class PostgresqlMixin:
    FIXTURE = PostgresqlFixture


class MySQLMixin:
    FIXTURE = MySQLFixture


def backend_test_cases(test_mixin, module_globals,
                       backend_fixtures=MIGRATED_FIXTURES):
    """Define ``<Mixin>Sqlite``, ``...PostgreSQL`` and ``...MySQL`` cases.

    ``test_mixin`` holds the tests; each generated class runs them on one
    backend, migrated to head unless ``backend_fixtures`` is
    :data:`EMPTY_FIXTURES`. Call it at module level with ``globals()``.
    """
    base_name = test_mixin.__name__.replace('Mixin', '').rstrip('_')
    for suffix, fixture in backend_fixtures:
        name = base_name + suffix
        cls = type(name, (test_mixin, DbTestCase),
                   {'__module__': module_globals['__name__'],
                    'FIXTURE': fixture})
        module_globals[name] = cls


@contextlib.contextmanager
def recorded_statements(engine):
    """``with recorded_statements(engine) as statements:`` lists the SQL.

    Transaction control (BEGIN, COMMIT...) is left out, as the benchmark's
    counter leaves it out: both count with tools/benchmark/statements.py.
    """
    statements = []
    stop = sql_statements.listen(engine, statements.append)
    try:
        yield statements
    finally:
        stop()


# ------------------------------------------------------ rows for db tests

def create_service(ctxt, host='compute1', binary='nova-compute', **fields):
    """A live service row through the Service object, as agents make them."""
    values = dict(topic='compute' if binary == 'nova-compute' else 'other',
                  report_count=0, disabled=False, forced_down=False,
                  version=1)
    values.update(fields)
    service = service_obj.Service(ctxt, host=host, binary=binary, **values)
    service.create()
    return service


def create_compute_node(ctxt, service=None, hostname='node1', **fields):
    """A compute node of ``service`` (or of no service) with small sizes."""
    values = dict(
        service_id=service.id if service is not None else None,
        host=service.host if service is not None else None,
        hypervisor_hostname=hostname, hypervisor_type='QEMU',
        hypervisor_version=8002000, host_ip='192.0.2.10', cpu_info='{}',
        vcpus=8, memory_mb=16384, local_gb=100, vcpus_used=2,
        memory_mb_used=4096, local_gb_used=10, free_ram_mb=12288,
        free_disk_gb=90, current_workload=0, running_vms=1,
        disk_available_least=80)
    values.update(fields)
    node = compute_node_obj.ComputeNode(ctxt, **values)
    node.create()
    return node


# The flavor copy of instances made by create_instance.
INSTANCE_FLAVOR = {'flavorid': '1', 'name': 'm1.tiny', 'memory_mb': 512,
                   'vcpus': 1, 'root_gb': 1, 'ephemeral_gb': 0, 'swap': 0,
                   'extra_specs': {}}


def create_instance(ctxt, host, name='server', **fields):
    fields.setdefault('flavor', INSTANCE_FLAVOR)
    instance = instance_obj.Instance(ctxt, host=host, node=host,
                                     display_name=name, vm_state='active',
                                     **fields)
    instance.create()
    return instance


def soft_delete_row(engine, model, row_id):
    """Soft-delete one row behind the objects' back, as another API would."""
    with engine.begin() as connection:
        connection.execute(
            sa.update(model).where(model.id == row_id)
            .values(deleted=row_id, deleted_at=sa.func.now()))
