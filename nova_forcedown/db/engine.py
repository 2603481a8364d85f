"""The database engine: configuration, SQLite's set-up, transactions, outages.

Every query function of db/ runs in a :func:`reader` or :func:`writer`
transaction of :data:`context_manager`, taking the request context first.
An operation of objects/ opens one writer and calls the query functions it
needs, which join it: the outermost transaction alone retries a deadlock
and turns a lost database into :class:`exception.DatabaseUnavailable`.
"""

import contextlib
import functools
import os
import re
import sqlite3
import threading
import weakref

from oslo_db import api as oslo_db_api
from oslo_db import exception as db_exc
from oslo_db.sqlalchemy import enginefacade
import sqlalchemy as sa

from nova_forcedown.db import sqlite_writers
from nova_forcedown import exception

context_manager = enginefacade.transaction_context()

# How long an SQLite connection waits for another writer's lock before it
# gives up with "database is locked", unless the URL sets ``timeout``.
SQLITE_BUSY_TIMEOUT_MS = 10000
# Connections to a SQLite file kept open when [database] max_pool_size is
# unset (oslo.db's own default).
SQLITE_POOL_SIZE = 5
# The size of the pools of SQLite file engines created from now on:
# max_pool_size as :func:`configure` last read it.
_sqlite_pool = {'size': SQLITE_POOL_SIZE}

# What a lost or unreachable database looks like to the outermost
# transaction, which raises DatabaseUnavailable for it: oslo.db's wrapped
# errors (a refused or dropped connection, a deadlock still failing after
# its retries) and what oslo.db passes through unwrapped (the pool's
# checkout timeout, a driver-level OperationalError or InterfaceError on a
# dead connection). All are transient: try again later.
OUTAGES = (db_exc.DBConnectionError, db_exc.DBDeadlock,
           sa.exc.OperationalError, sa.exc.InterfaceError,
           sa.exc.DisconnectionError, sa.exc.TimeoutError)


def is_outage(exc):
    """Whether ``exc`` means the database cannot be used just now.

    A plain oslo.db DBError counts when the driver error it wraps does.
    """
    if isinstance(exc, OUTAGES):
        return True
    inner = getattr(exc, 'inner_exception', None)
    return (isinstance(exc, db_exc.DBError) and inner is not None and
            inner is not exc and isinstance(inner, OUTAGES))


# Changes no row (its WHERE is false) but takes SQLite's write lock.
TAKE_WRITE_LOCK = sa.text('UPDATE services SET id = id WHERE 0 = 1')


def write_first(connection):
    """On SQLite, make the transaction a writer before it reads.

    In WAL mode a transaction that read before another writer committed
    can no longer write: it fails at once with "database is locked",
    whatever the busy timeout (a plain BEGIN takes no lock). An UPDATE
    that changes nothing takes the write lock, waiting for it as any write
    does, and every read after it sees the latest rows. Other backends
    need nothing: their writes wait for row locks.

    Such writers first wait their turn in a queue of the file's
    (:mod:`nova_forcedown.db.sqlite_writers`), fairer than SQLite's own
    waiting.
    """
    if connection.dialect.name != 'sqlite':
        return
    sqlite_writers.take_turn(connection)
    connection.execute(TAKE_WRITE_LOCK)


# Nobody (API request or heartbeat) may wait long for a database server
# that has gone away: the pool gives up a checkout after POOL_TIMEOUT
# seconds and the driver a connection attempt after CONNECT_TIMEOUT (a lost
# network otherwise waits for the kernel's TCP timeout, minutes). Values
# set in the configuration file win. SQLite has neither.
POOL_TIMEOUT = 10
CONNECT_TIMEOUT = 5

# The extra of the package that installs the driver of a backend
# (setup.cfg's [extras]).
DRIVER_EXTRAS = {'postgresql': 'postgresql', 'mysql': 'mysql'}
# The URL schemes whose driver each extra installs, the one to write first.
# A bare ``postgresql://`` is SQLAlchemy's default driver, psycopg 3, which
# the extra installs; a bare ``mysql://`` is mysqlclient, which it does not.
# psycopg2 stays for the URLs written before psycopg 3 was ours.
EXTRA_DRIVERS = {'postgresql': ('postgresql+psycopg', 'postgresql',
                                'postgresql+psycopg2'),
                 'mysql': ('mysql+pymysql',)}

# Backends of a database server, whose drivers take ``connect_timeout`` as
# a URL parameter.
_SERVER_BACKENDS = ('postgresql', 'mysql')


# oslo.db's line for each failed first connection; the commands say it
# once, in their own words.
QUIET_CONNECTION_RETRIES = 'oslo_db.sqlalchemy.engines=ERROR'


def try_once_at_start(conf):
    """Make oslo.db's first connection one try, on every backend.

    oslo.db retries a refused MySQL connection for 100 s ([database]
    max_retries x retry_interval) but not a refused PostgreSQL one. The
    agent waits for its database in its own loop, paced by those options.
    """
    conf.set_override('max_retries', 1, group='database')


def fail_at_once_at_start(conf):
    """One try, no wait, on every backend.

    The API, the manage and the status commands stop within the connect
    timeout when the database does not answer.
    """
    try_once_at_start(conf)
    conf.set_override('retry_interval', 0, group='database')


def configure(conf, manager=None):
    """Point the transaction context (or ``manager``) at ``conf.database``.

    The directory of an SQLite file is created when missing, so the default
    database under ``state_path`` works on a fresh machine.
    """
    _check_driver(conf.database.connection)
    _server_timeouts(conf)
    settings = _database_settings(conf)
    _ensure_sqlite_directory(settings.get('connection'))
    _sqlite_pool['size'] = conf.database.max_pool_size or SQLITE_POOL_SIZE
    (manager or context_manager).configure(**settings)


def parse_url(connection):
    """The SQLAlchemy URL of ``[database] connection``, or one line why not."""
    try:
        return sa.engine.make_url(connection)
    except sa.exc.ArgumentError:
        raise exception.DatabaseURLInvalid()


def _check_driver(connection):
    """Refuse a URL whose DB-API driver is not installed.

    The error names the package extra that installs it.
    """
    if not connection:
        return
    url = parse_url(connection)
    try:
        dialect = url.get_dialect()
    except sa.exc.NoSuchModuleError:
        raise exception.DatabaseDialectUnknown(scheme=url.drivername)
    try:
        dialect.import_dbapi()
    except ImportError as exc:
        backend = url.get_backend_name()
        module = exc.name or url.drivername
        schemes = EXTRA_DRIVERS.get(backend)
        if schemes and url.drivername not in schemes:
            raise exception.DatabaseDriverNotOurs(
                scheme=url.drivername, module=module, ours=schemes[0],
                extra=DRIVER_EXTRAS[backend])
        raise exception.DatabaseDriverMissing(
            module=module, backend=backend,
            extra=DRIVER_EXTRAS.get(backend, backend))


def _server_timeouts(conf):
    url = parse_url(conf.database.connection)
    if url.get_backend_name() not in _SERVER_BACKENDS:
        return
    conf.set_default('pool_timeout', POOL_TIMEOUT, group='database')
    parameters = []
    if 'connect_timeout' not in url.query:
        parameters.append('connect_timeout=%d' % CONNECT_TIMEOUT)
    # oslo.db would connect to MySQL with 3-byte utf8: a 4-byte character
    # (an emoji in a disabled reason) would then fail there alone.
    if url.get_backend_name() == 'mysql' and 'charset' not in url.query:
        parameters.append('charset=utf8mb4')
    if parameters:
        conf.set_default('connection_parameters', '&'.join(parameters),
                         group='database')


def _ensure_sqlite_directory(url):
    if not url:
        return
    url = parse_url(url)
    if url.get_backend_name() == 'sqlite' and url.database not in (
            None, '', ':memory:'):
        directory = os.path.dirname(os.path.abspath(url.database))
        try:
            os.makedirs(directory, exist_ok=True)
        except OSError as exc:
            raise exception.DatabaseUnavailable(
                reason='cannot create the directory %s of the SQLite '
                       'database: %s' % (directory, exc.strerror or exc))


def _database_settings(conf):
    settings = dict(conf.database.items())
    settings.pop('sync_on_startup', None)
    # The option names of oslo.db that enginefacade does not know.
    for key in ('backend', 'use_db_reconnect', 'db_retry_interval',
                'db_inc_retry_interval', 'db_max_retry_interval',
                'db_max_retries', 'use_tpool'):
        settings.pop(key, None)
    # oslo.db sleeps on every connection check-in to let eventlet switch
    # green threads; this project runs on native threads, where that sleep
    # is only a system call per transaction.
    settings['thread_checkin'] = False
    return settings


def get_engine():
    return context_manager.writer.get_engine()


def _setup_sqlite(engine):
    """Let concurrent SQLite writers wait their turn instead of failing.

    WAL journal mode lets readers go on while one writer writes, and the
    busy timeout makes a writer wait for the lock rather than fail at once
    with "database is locked" (a ``timeout`` in the URL, in seconds, wins).
    Every other backend is left alone.

    Both cost no statement per connection (a file's engine opens one per
    transaction): the timeout is an argument of the connection, and the
    journal mode, kept in the file, is set by the engine's first one.
    """
    if engine.dialect.name != 'sqlite':
        return
    if engine.url.database in (None, '', ':memory:'):
        return
    in_wal_mode = threading.Event()

    @sa.event.listens_for(engine, 'do_connect')
    def _busy_timeout(dialect, connection_record, cargs, cparams):
        cparams.setdefault('timeout', SQLITE_BUSY_TIMEOUT_MS / 1000.0)

    @sa.event.listens_for(engine, 'connect')
    def _wal_mode(dbapi_connection, connection_record):
        if not in_wal_mode.is_set():
            dbapi_connection.execute('PRAGMA journal_mode = WAL').close()
            in_wal_mode.set()

    sqlite_writers.attach(engine, float(engine.url.query.get(
        'timeout', SQLITE_BUSY_TIMEOUT_MS / 1000.0)))
    _keep_open(engine)


def _keep_open(engine):
    """Hold one connection to ``engine``'s file open while it lives.

    A transaction's connection is closed when more threads than the pool
    keeps ask at once, or when the pool is disposed (before the API's
    workers fork); when it was the only one, SQLite checkpoints the
    write-ahead log and deletes it as it closes, an fsync and more. A
    connection left open, idle, outside any transaction, prevents that;
    the log is then checkpointed as it grows.
    """
    keeper = sqlite3.connect(engine.url.database, check_same_thread=False)
    weakref.finalize(engine, keeper.close)


def pool_sqlite_connections(engine):
    """Keep up to ``max_pool_size`` connections to a SQLite file open.

    oslo.db gives SQLite files no pool: every transaction opened the file
    (its write-ahead log index, the connection's pragmas and functions)
    and closed it, 0.8 ms of a 1.7 ms one-row read on the benchmark's
    machine. A QueuePool keeps them open between transactions; like no
    pool, it opens more without limit when more threads ask at once
    (``max_overflow`` -1), so no thread ever waits for a connection.

    The listeners of the old pool (oslo.db's, this module's) carry over,
    as ``Pool.recreate`` carries them; so does its creator, which runs the
    engine's ``do_connect`` listeners.
    """
    if (engine.dialect.name != 'sqlite' or
            engine.url.database in (None, '', ':memory:')):
        return
    unpooled = engine.pool
    engine.pool = sa.pool.QueuePool(
        unpooled._creator, pool_size=_sqlite_pool['size'], max_overflow=-1,
        dialect=engine.dialect, _dispatch=unpooled.dispatch)
    unpooled.dispose()


@functools.lru_cache(maxsize=256)
def _compiled(pattern):
    return re.compile(pattern)


def sqlite_regexp(pattern, value):
    """SQLite's ``value REGEXP pattern``: ``pattern`` found in ``value``.

    Python's ``re.search``, as the listing's filters are checked with
    Python's ``re``; NULL for a NULL operand (never a match), where
    oslo.db's own function would match the text "None". A listing
    compiles its pattern once, not once per row.
    """
    if pattern is None or value is None:
        return None
    return _compiled(pattern).search(str(value)) is not None


def add_sqlite_functions(dbapi_connection):
    """Make :func:`sqlite_regexp` the REGEXP of an sqlite3 connection."""
    dbapi_connection.create_function('regexp', 2, sqlite_regexp,
                                     deterministic=True)


def register_sqlite_functions(engine):
    """Give every new SQLite connection of ``engine`` :func:`sqlite_regexp`.

    Registered after oslo.db's own REGEXP, which it replaces; other
    backends have an operator of their own.
    """
    if engine.dialect.name != 'sqlite':
        return

    @sa.event.listens_for(engine, 'connect')
    def _regexp(dbapi_connection, connection_record):
        add_sqlite_functions(dbapi_connection)


# oslo.db's mark, in a SQLite connection's info, that it has sent the
# transaction's BEGIN: its "begin" listener sends none while the mark is
# there, and its commit and rollback listeners take it away.
_OSLO_DB_BEGUN = 'in_transaction'
# ``pending`` is True while this thread opens a read transaction.
_read_opening = threading.local()


def reads_without_begin(engine):
    """On a SQLite file, a read transaction sends no BEGIN.

    Each of its statements then reads the latest rows on its own, as a
    read does on PostgreSQL (:func:`_reads_without_transaction`), and the
    read costs no statement of its own: oslo.db's BEGIN, sent through
    SQLAlchemy's whole execution path, took about 30 microseconds of a
    0.5-0.8 ms one-row read. Writes keep their BEGIN, and with it all or
    nothing. Only a read's transaction is marked, as its connection is
    checked out (see :func:`_opening_a_read`); the mark goes with the
    connection's return to the pool as well, should oslo.db ever stop
    taking it away.
    """
    if (engine.dialect.name != 'sqlite' or
            engine.url.database in (None, '', ':memory:')):
        return

    # As its connection is checked out: oslo.db's "begin" listener comes
    # before any other.
    @sa.event.listens_for(engine, 'engine_connect')
    def _read_checks_out(connection):
        if getattr(_read_opening, 'pending', False):
            _read_opening.pending = False
            connection.info[_OSLO_DB_BEGUN] = True

    @sa.event.listens_for(engine, 'checkin')
    def _checked_in(dbapi_connection, connection_record):
        connection_record.info.pop(_OSLO_DB_BEGUN, None)


@contextlib.contextmanager
def _opening_a_read():
    """Around the opening of a read transaction, and nothing after it.

    The first connection this thread checks out meanwhile is the read's:
    an enginefacade reader checks one out and begins at once.
    """
    _read_opening.pending = True
    try:
        yield
    finally:
        _read_opening.pending = False


def _read_opened(connection):
    """The read's transaction is open: no other is marked as it begins."""
    _read_opening.pending = False


# Engines this context manager creates (not the test fixtures' own).
context_manager.append_on_engine_create(_setup_sqlite)
context_manager.append_on_engine_create(reads_without_begin)
context_manager.append_on_engine_create(register_sqlite_functions)
context_manager.append_on_engine_create(pool_sqlite_connections)


def _in_transaction(context):
    """Whether ``context`` is inside a transaction of this thread already."""
    try:
        context.transaction_ctx
    except db_exc.NoEngineContextEstablished:
        return False
    return True


# A deadlock (or a serialization failure) rolls the whole transaction
# back: only the outermost one can run again.
_retried = oslo_db_api.wrap_db_retry(
    max_retries=5, retry_on_deadlock=True, retry_interval=0.05,
    inc_retry_interval=True, max_retry_interval=0.5)


def _outermost(function, transaction, begin=None, scope=None,
               joined=None, opening=None):
    """``function`` in ``transaction`` (an enginefacade decorator).

    Joined when a transaction is open (through ``joined`` when given,
    else through ``transaction``); else opened (inside ``opening()``
    when given; ``begin(connection)`` first, the function run inside
    ``scope(connection)``), retried on deadlock, and a lost database
    raised as DatabaseUnavailable.
    """
    if joined is None:
        joined = transaction(function)

    def opened(context, *args, **kwargs):
        if begin is not None:
            begin(context.connection)
        if scope is None:
            return function(context, *args, **kwargs)
        with scope(context.connection):
            return function(context, *args, **kwargs)

    attempt = transaction(opened)
    if opening is not None:
        attempt = _opened_inside(opening, attempt)
    retried = _retried(attempt)

    @functools.wraps(function)
    def in_transaction(context, *args, **kwargs):
        if _in_transaction(context):
            return joined(context, *args, **kwargs)
        with _lost_as_unavailable():
            return retried(context, *args, **kwargs)

    return in_transaction


def _opened_inside(opening, attempt):
    @functools.wraps(attempt)
    def inside(*args, **kwargs):
        with opening():
            return attempt(*args, **kwargs)
    return inside


@contextlib.contextmanager
def _lost_as_unavailable():
    """Raise a lost database as DatabaseUnavailable, anything else as is."""
    try:
        yield
    except Exception as exc:
        if is_outage(exc):
            raise exception.DatabaseUnavailable(
                reason=exception.first_line(exc)) from exc
        raise


def _reads_without_transaction(connection):
    """Whether a read on ``connection`` gains nothing from a transaction.

    On PostgreSQL at READ COMMITTED (its default) every statement sees
    the rows committed when it starts, inside a transaction or not, and a
    read takes no lock that would outlive its statement. The transaction
    adds only two round trips: the driver's ``BEGIN`` before the first
    statement and the ``ROLLBACK`` at the end. MySQL's REPEATABLE READ
    gives a transaction's statements one snapshot, so it keeps its.
    """
    dialect = connection.dialect
    return (dialect.name == 'postgresql' and
            dialect.driver in _AUTOCOMMIT_DRIVERS and
            dialect.default_isolation_level == 'READ COMMITTED')


# PostgreSQL's drivers whose connections switch to autocommit and back
# between transactions, each without a round trip.
_AUTOCOMMIT_DRIVERS = ('psycopg', 'psycopg2')


@contextlib.contextmanager
def _autocommit_read(connection):
    """Run a read's statements in the driver's autocommit, where it gains.

    SQLAlchemy's transaction stays open around them, and ends with a
    rollback that psycopg skips (no transaction is in progress). The
    connection goes back to the pool as it came, as SQLAlchemy's own
    ping leaves it.
    """
    if not _reads_without_transaction(connection):
        yield
        return
    dbapi_connection = connection.connection.dbapi_connection
    dbapi_connection.autocommit = True
    try:
        yield
    finally:
        if not dbapi_connection.closed:
            dbapi_connection.autocommit = False


def reader(function):
    """Run ``function(context, ...)`` in a read transaction (or the open one).

    ``context.connection`` is its SQLAlchemy Core connection. In an open
    transaction, reader or writer, that is already the transaction's, and
    the function is called as it is: enginefacade would only hand it the
    same connection, at a few tens of microseconds per read of a request.
    """
    return _outermost(function, context_manager.reader.connection,
                      begin=_read_opened, scope=_autocommit_read,
                      joined=function, opening=_opening_a_read)


@contextlib.contextmanager
def reading(context):
    """A read transaction for a ``with`` statement's body (or the open one).

    For rows used as the cursor reads them, after the query function that
    ran the statement has returned: a listing rendered as it is read,
    never held whole. Not retried, as what was read may be half used
    already; a lost database is DatabaseUnavailable, as with
    :func:`reader`.
    """
    if _in_transaction(context):
        yield
        return
    with _lost_as_unavailable(), contextlib.ExitStack() as read:
        with _opening_a_read():
            read.enter_context(
                context_manager.reader.connection.using(context))
        read.enter_context(_autocommit_read(context.connection))
        yield


def writer(function=None, *, writes_first=False):
    """Run ``function(context, ...)`` in a write transaction (or the open one).

    On SQLite a new one takes the write lock before anything else
    (:func:`write_first`), as ``BEGIN IMMEDIATE`` would.

    ``@writer(writes_first=True)``: the function's first statement is a
    write, which takes SQLite's lock itself (waiting for it as any write
    does), so the transaction skips the writers' queue. For heartbeats:
    one short UPDATE each, thousands a second, whose turns in the queue
    would cost them two thirds of their rate.
    """
    if function is None:
        return functools.partial(writer, writes_first=writes_first)
    return _outermost(function, context_manager.writer.connection,
                      begin=None if writes_first else write_first)
