"""nova-forcedown-compute: the heartbeat agent of one or many compute hosts.

It registers its services (and, for nova-compute, compute nodes) in the
configured database, heartbeats them every report_interval and refreshes the
nodes' resources every minute, until SIGTERM or SIGINT. A database that is
away at start is waited for, as the heartbeats wait for it later: a host
restarted during an outage comes up when the database does. So is a schema
still behind this code: an agent started beside an API that migrates the
database at start comes up once the migration is done.
"""

import sys

from oslo_config import cfg
from oslo_db import exception as db_exc
from oslo_log import log as logging
from sqlalchemy import exc as sa_exc
from stevedore import exception as stevedore_exc

from nova_forcedown.compute import agent as compute_agent
from nova_forcedown import cmd
from nova_forcedown.cmd import database_wait
from nova_forcedown import conf as nf_conf
from nova_forcedown.db import engine as db_engine
from nova_forcedown.db import schema
from nova_forcedown import exception
from nova_forcedown import notifications
from nova_forcedown import objects
from nova_forcedown import rpc
from nova_forcedown.rpc import transport as rpc_transport

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

# Start-up failures reported as one line, with a non-zero exit.
_STARTUP_ERRORS = (exception.NovaForcedownException, stevedore_exc.NoMatches,
                   db_exc.DBError, sa_exc.SQLAlchemyError, OSError)


def main(argv=None):
    try:
        conf = nf_conf.make_conf(
            argv, register_cli=CLI_OPTS, description=DESCRIPTION,
            example='%(prog)s --config-file /etc/nova_forcedown/'
                    'nova_forcedown.conf --driver fake --hosts 3')
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
    tries = database_wait.tries_at_start(conf)
    db_engine.configure(conf)
    notifications.configure(conf)
    agent = compute_agent.Agent(conf, driver)
    # The schema first, then the registration: the log says the schema is
    # current before the agent says what it registered.
    for step in (lambda: _schema_current(conf), agent.register):
        if not database_wait.until_database_answers(conf, stop, tries, step):
            return None
    if rpc_transport.enabled(conf):
        # A build that fails here is retried on another host, told of it
        # as the API tells the agents their tasks.
        rpc.configure(conf)
    agent.start()
    return agent


def _schema_current(conf):
    if conf.database.sync_on_startup:
        schema.sync_on_startup(conf)
    schema.check_migrated()


def _serve(conf, agent, stop):
    LOG.info('Heartbeating %(count)d service(s) every %(interval)s s.',
             {'count': len(agent.services),
              'interval': conf.report_interval})
    stop.wait()
    LOG.info('Stopping on signal.')
    agent.stop()
    rpc.reset()
    notifications.flush()
    cmd.before_exit()


if __name__ == '__main__':
    sys.exit(main())
