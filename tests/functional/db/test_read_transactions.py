"""Reads and writes on one pool of connections, on every backend.

On PostgreSQL a read runs its statements without a transaction (at READ
COMMITTED one would add only BEGIN and ROLLBACK round trips), through
psycopg 3 and through psycopg2, and on a SQLite file without its BEGIN; a
write on the connection a read used before it is still one transaction,
all or nothing. MariaDB reads keep
their transaction, and with it one snapshot for all their statements.
"""

import sqlite3

from oslotest import base
import sqlalchemy as sa

from nova_forcedown import context
from nova_forcedown.db import engine as db_engine
from nova_forcedown.db import models
from tests.fixtures import databases
from tests.fixtures import db_rows

# More rounds than the test databases' pools keep connections, so that
# every pooled connection serves a read and then a write.
ROUNDS = 12

_SERVICES = models.Service.__table__
# libpq's transaction status, which the server sends after each statement
# (PQTRANS_IDLE, PQTRANS_INTRANS); psycopg 3 and psycopg2 both give it.
IDLE, IN_TRANSACTION = 0, 2


def _server_transaction_status(connection):
    return connection.connection.dbapi_connection.info.transaction_status


class _Interrupted(Exception):
    pass


@db_engine.writer
def _create_then_fail(context, host):
    db_rows.create_service(context, host=host)
    raise _Interrupted()


@db_engine.reader
def _hosts(context):
    return set(context.connection.execute(
        sa.select(_SERVICES.c.host)).scalars())


class ReadTransactionsMixin:

    def test_a_failed_write_after_reads_leaves_nothing(self):
        for number in range(ROUNDS):
            with db_engine.reading(self.context):
                self.context.connection.execute(sa.select(_SERVICES)).all()
            self.assertRaises(_Interrupted, _create_then_fail, self.context,
                              'half-%d' % number)
        self.assertEqual(set(), _hosts(self.context))

    def test_a_read_sees_a_write_committed_before_it(self):
        db_rows.create_service(self.context, host='before')
        self.assertEqual({'before'}, _hosts(self.context))


databases.backend_test_cases(ReadTransactionsMixin, globals())


@db_engine.writer
def _status_in_a_write(context):
    context.connection.execute(sa.select(1))
    return _server_transaction_status(context.connection)


class PostgresqlReadsTestCase(databases.PostgresqlMixin,
                              databases.DbTestCase):

    def test_a_read_runs_each_statement_on_its_own(self):
        # Past psycopg 3's five runs, after which it prepares a statement.
        for _ in range(ROUNDS):
            with db_engine.reading(self.context):
                self.context.connection.execute(sa.select(1))
                self.assertEqual(
                    IDLE, _server_transaction_status(self.context.connection))
            self.assertEqual(IN_TRANSACTION, _status_in_a_write(self.context))


class Psycopg2ReadsTestCase(ReadTransactionsMixin, PostgresqlReadsTestCase):
    """The same on psycopg2, the driver of URLs written before psycopg 3.

    The tests' opportunistic PostgreSQL is reached through psycopg 3
    (tox.ini); this reaches the same database through psycopg2, with the
    service's engine.
    """

    def setUp(self):
        super().setUp()
        url = self.engine.url.set(drivername='postgresql+psycopg2')
        self.engine = self.useFixture(databases.ServiceEngine(
            url.render_as_string(hide_password=False))).engine
        self.assertEqual('psycopg2', self.engine.dialect.driver)


class MySQLReadsTestCase(databases.MySQLMixin, databases.DbTestCase):

    def test_a_read_sees_one_snapshot(self):
        with db_engine.reading(self.context):
            before = self.context.connection.execute(
                sa.select(sa.func.count()).select_from(_SERVICES)).scalar()
            with self.engine.connect() as other:
                other.execute(_SERVICES.insert().values(
                    host='meanwhile', binary='nova-compute',
                    topic='compute', report_count=0, disabled=False,
                    forced_down=False, deleted=0))
                other.commit()
            during = self.context.connection.execute(
                sa.select(sa.func.count()).select_from(_SERVICES)).scalar()
        self.assertEqual(before, during)
        self.assertEqual({'meanwhile'}, _hosts(self.context))


class FileSqliteReadsTestCase(ReadTransactionsMixin, base.BaseTestCase):
    """A SQLite file, with the engine the service itself creates.

    (The other SQLite cases run on oslo.db's database in memory, made
    without the service's engine hooks.)
    """

    def setUp(self):
        super().setUp()
        database = self.useFixture(
            databases.ServiceSqliteFile('nf-read-transactions-'))
        self.path, self.engine = database.path, database.engine
        self.context = context.get_admin_context()

    def _count(self):
        return self.context.connection.execute(
            sa.select(sa.func.count()).select_from(_SERVICES)).scalar()

    def test_a_read_runs_each_statement_on_its_own(self):
        other = sqlite3.connect(self.path)
        self.addCleanup(other.close)
        for number in range(ROUNDS):
            with db_engine.reading(self.context):
                before = self._count()
                other.execute(
                    "INSERT INTO services (host, \"binary\", topic, "
                    "report_count, disabled, forced_down, deleted, version) "
                    "VALUES (?, 'nova-compute', 'compute', 0, 0, 0, 0, 1)",
                    ('meanwhile-%d' % number,))
                other.commit()
                self.assertEqual(before + 1, self._count())
