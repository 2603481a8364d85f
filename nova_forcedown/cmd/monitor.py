"""nova-forcedown-monitor: fence failed compute hosts and recover them.

It watches the compute services' liveness; a host whose service is down
and whose BMC (or management address) confirms the failure is fenced,
forced down with its servers marked shut down, and its servers evacuated.
Several may run: one leads, the others stand by (see the monitor guide).
A database away at start, or with its schema behind this code, is waited
for, as the agent waits for it. Runs until SIGTERM or SIGINT.
"""

import sys

from oslo_config import cfg
from oslo_db import exception as db_exc
from oslo_log import log as logging
from sqlalchemy import exc as sa_exc
from tooz import coordination

from nova_forcedown import cmd
from nova_forcedown.cmd import database_wait
from nova_forcedown import conf as nf_conf
from nova_forcedown.db import engine as db_engine
from nova_forcedown.db import schema
from nova_forcedown import exception
from nova_forcedown.monitor import leadership as monitor_leadership
from nova_forcedown.monitor import manager
from nova_forcedown.monitor import readiness
from nova_forcedown import notifications
from nova_forcedown import objects
from nova_forcedown.servicegroup import api as servicegroup_api

LOG = logging.getLogger(__name__)
PROG = 'nova-forcedown-monitor'

DESCRIPTION = ('Watch the compute hosts: fence a failed one through its BMC, '
               'force it down and evacuate its servers.')

_STARTUP_ERRORS = (exception.NovaForcedownException, db_exc.DBError,
                   sa_exc.SQLAlchemyError, coordination.ToozError, OSError)


def main(argv=None):
    try:
        conf = nf_conf.make_conf(argv, description=DESCRIPTION)
    except cfg.Error as exc:
        print('%s: %s' % (PROG, exc), file=sys.stderr)
        return 2
    logging.set_defaults(default_log_levels=logging.get_default_log_levels() +
                         ['alembic=WARN', 'stevedore=ERROR',
                          db_engine.QUIET_CONNECTION_RETRIES])
    logging.setup(conf, 'nova_forcedown')
    objects.register_all()
    stop = cmd.stop_on_signals()
    try:
        started = _start(conf, stop)
    except _STARTUP_ERRORS as exc:
        print('%s: %s' % (PROG, exception.first_line(exc)), file=sys.stderr)
        return 1
    if started is None:
        LOG.info('Stopping on signal before the database answered.')
        return 0
    loops, leader = started
    stop.wait()
    LOG.info('Stopping on signal.')
    for loop in loops:
        loop.stop(conf.monitor.fence_timeout)
    leader.stop()
    notifications.flush()
    return 0


def _start(conf, stop):
    """(loops, leadership) of the running monitor; None if stopped first."""
    tries = database_wait.tries_at_start(conf)
    db_engine.configure(conf)
    if not database_wait.until_database_answers(conf, stop, tries,
                                                schema.check_migrated):
        return None
    notifications.configure(conf)
    url = monitor_leadership.lock_url(conf)
    leader = monitor_leadership.Leadership(
        url, remind_every=conf.log_reminder_interval).start()
    monitor = manager.Monitor(
        conf, servicegroup_api.API(conf, reads_every=conf.monitor.interval),
        leader)
    LOG.info('Monitor %(member)s looks every %(interval)s s; the leader '
             'holds the lock at %(url)s.',
             {'member': leader.member_id,
              'interval': conf.monitor.interval,
              'url': leader.shown_url})
    loops = [monitor.start()]
    if conf.monitor.bmc_check_interval:
        loops.append(readiness.FenceReadiness(
            conf, leader, lambda: monitor.watched_hosts).start())
    return loops, leader


if __name__ == '__main__':
    sys.exit(main())
