"""nova-forcedown-compute: the heartbeat agent of one or many compute hosts.

It registers its services (and, for nova-compute, compute nodes) in the
configured database, heartbeats them every report_interval and refreshes the
nodes' resources every minute, until SIGTERM or SIGINT. A database that is
away at start is waited for, as the heartbeats wait for it later: a host
restarted during an outage comes up when the database does. So is a schema
still behind this code: an agent started beside an API that migrates the
database at start comes up once the migration is done.
"""

import itertools
import sys

from oslo_config import cfg
from oslo_db import exception as db_exc
from oslo_log import log as logging
from sqlalchemy import exc as sa_exc
from stevedore import exception as stevedore_exc

from nova_forcedown.compute import agent as compute_agent
from nova_forcedown import condition_log
from nova_forcedown import cmd
from nova_forcedown import conf as nf_conf
from nova_forcedown.db import engine as db_engine
from nova_forcedown.db import schema
from nova_forcedown import exception
from nova_forcedown import notifications
from nova_forcedown import objects

LOG = logging.getLogger(__name__)

DESCRIPTION = ('Register compute hosts (this machine, or simulated ones) '
               'and heartbeat them; carry out their servers\' tasks.')

CLI_OPTS = [
    cfg.StrOpt('driver', default='local',
               help='Compute driver: "local" reports this machine, "fake" '
                    'simulated hosts (--hosts, --host-prefix, '
                    '--instances).'),
    # [DEFAULT] host is not a command-line option; --host overrides it.
    cfg.StrOpt('host', dest='agent_host', metavar='HOST',
               help='Host name of the local driver (default: [DEFAULT] '
                    'host, this machine\'s name).'),
    cfg.StrOpt('binary', default='nova-compute',
               help='Binary to register, e.g. nova-scheduler or '
                    'nova-conductor; only nova-compute gets compute '
                    'nodes.'),
    cfg.IntOpt('hosts', default=1, min=1,
               help='Number of simulated hosts (fake driver).'),
    cfg.StrOpt('host-prefix', default='fake-compute-',
               help='Simulated hosts are named <prefix><i>, i from 1 (fake '
                    'driver).'),
    cfg.IntOpt('instances', default=0, min=0,
               help='Simulated servers per host (fake driver).'),
    cfg.StrOpt('flavor', default=compute_agent.DEFAULT_FLAVOR,
               help='Name of the flavor the simulated servers are built '
                    'with (fake driver): by default Nova\'s classic '
                    'm1.medium, which a development API creates; the '
                    'driver\'s own fake.small, of the same size, if no '
                    'flavor has that name.'),
    cfg.StrOpt('project-id', default='fake-project',
               help='Project that owns the simulated servers (fake '
                    'driver).'),
    cfg.StrOpt('user-id', default='fake-user',
               help='User that owns the simulated servers (fake driver).'),
    cfg.StrOpt('state-dir',
               help='Directory where the fake driver keeps what each '
                    'simulated host runs, so that a restarted agent finds '
                    'its servers still running (default: kept in memory).'),
    cfg.StrOpt('availability-zone',
               help='Availability zone the services report (default: '
                    '[DEFAULT] default_availability_zone for nova-compute, '
                    'internal_service_availability_zone for others).'),
]

DATABASE_DOWN_AT_START = condition_log.Messages(
    level=logging.WARNING,
    started='Cannot start, the database is unavailable (%(error)s); '
            'trying again every %(interval)s s, %(tries)s.',
    reminder='Still waiting for the database after %(seconds)d s '
             '(%(error)s); trying again every %(interval)s s, %(tries)s.',
    ended='Recovered: the database answers again after %(seconds)d s.')

# An API or agent started beside this one with [database] sync_on_startup
# may be migrating the schema right now; an operator may be about to.
SCHEMA_BEHIND_AT_START = condition_log.Messages(
    level=logging.WARNING,
    started='Cannot start yet: %(error)s Waiting for the schema, which a '
            'server started with [database] sync_on_startup may be '
            'migrating; trying again every %(interval)s s, %(tries)s.',
    reminder='Still waiting for the database schema after %(seconds)d s '
             '(%(error)s); trying again every %(interval)s s, %(tries)s.',
    ended='The database schema is current after %(seconds)d s.')

# What a start waits for.
_OUTAGE = 'outage'
_SCHEMA = 'schema'

# Start-up failures reported as one line, with a non-zero exit.
_STARTUP_ERRORS = (exception.NovaForcedownException, stevedore_exc.NoMatches,
                   db_exc.DBError, sa_exc.SQLAlchemyError, OSError)


def main(argv=None):
    try:
        conf = nf_conf.make_conf(argv, register_cli=CLI_OPTS,
                                 description=DESCRIPTION)
    except cfg.Error as exc:
        _error(exc)
        return 2
    logging.set_defaults(default_log_levels=logging.get_default_log_levels() +
                         ['alembic=WARN', 'stevedore=ERROR'])
    logging.setup(conf, 'nova_forcedown')
    objects.register_all()
    stop = cmd.stop_on_signals()
    try:
        agent = _start(conf, stop)
    except _STARTUP_ERRORS as exc:
        _error(exception.first_line(exc))
        return 1
    if agent is None:
        LOG.info('Stopping on signal before the database answered.')
        return 0
    _serve(conf, agent, stop)
    return 0


def _error(message):
    print('nova-forcedown-compute: %s' % message, file=sys.stderr)


def _start(conf, stop):
    """The registered, heartbeating agent; None if stopped while waiting."""
    driver = compute_agent.load_driver(conf)
    tries = _tries_at_start(conf)
    db_engine.configure(conf)
    notifications.configure(conf)
    agent = compute_agent.Agent(conf, driver)
    if not _until_database_answers(conf, stop, tries,
                                   lambda: _register(conf, agent)):
        return None
    agent.start()
    return agent


def _tries_at_start(conf):
    """How often to try the database at start: None for ever.

    ``[database] max_retries`` and ``retry_interval`` say it, as they do
    for oslo.db's first connection, but this process waits in its own loop,
    which SIGTERM ends at once; oslo.db itself tries once.
    """
    tries = conf.database.max_retries
    db_engine.try_once_at_start(conf)
    return None if tries == -1 else max(1, tries)


def _register(conf, agent):
    if conf.database.sync_on_startup:
        schema.sync_on_startup(conf)
    schema.check_migrated()
    agent.register()


def _until_database_answers(conf, stop, tries, step):
    """Run ``step`` until the database answers it, ``tries`` times at most.

    The database may be away, or there with its schema behind this code
    (an API beside this agent migrating it at start, an upgrade whose db
    sync is still to come): both are waited for, each said once, in its
    own words. Registration finds or creates each row, so a step cut
    short is safely run again. False if ``stop`` is set meanwhile; the
    last error (DatabaseUnavailable or DatabaseNotMigrated) when the
    tries run out.
    """
    waits = {
        _OUTAGE: condition_log.ConditionLog(
            LOG, DATABASE_DOWN_AT_START, conf.log_reminder_interval),
        _SCHEMA: condition_log.ConditionLog(
            LOG, SCHEMA_BEHIND_AT_START, conf.log_reminder_interval)}
    interval = conf.database.retry_interval
    attempts = itertools.count(1) if tries is None else range(1, tries + 1)
    for attempt in attempts:
        kind, error = _what_stops(step)
        for waited, log in waits.items():
            if waited != kind:
                log.update([])
        if kind is None:
            return True
        if attempt == tries:
            raise _given_up(kind, error, tries)
        waits[kind].update(['database'], error=exception.first_line(error),
                           interval=interval,
                           tries='until it answers' if tries is None else
                           'up to %d times' % tries)
        if stop.wait(interval):
            return False


def _what_stops(step):
    """(None, None) once ``step`` ran; else what kind of wait, and why."""
    try:
        step()
    except exception.DatabaseNotMigrated as exc:
        return _SCHEMA, exc
    except Exception as exc:
        if _is_outage(exc):
            return _OUTAGE, exc
        raise
    return None, None


def _is_outage(exc):
    return (isinstance(exc, exception.DatabaseUnavailable) or
            db_engine.is_outage(exc))


def _given_up(kind, error, tries):
    if kind == _SCHEMA:
        return error
    return exception.DatabaseUnavailable(
        reason='%s, after %d tries ([database] max_retries)' % (
            exception.first_line(error), tries))


def _serve(conf, agent, stop):
    LOG.info('Heartbeating %(count)d service(s) every %(interval)s s.',
             {'count': len(agent.services),
              'interval': conf.report_interval})
    stop.wait()
    LOG.info('Stopping on signal.')
    agent.stop()
    notifications.flush()


if __name__ == '__main__':
    sys.exit(main())
