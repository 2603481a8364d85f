"""nova-forcedown-monitor: fence failed compute hosts and recover them.

A client of the compute API of any Nova cloud (``[compute_api]``): it
watches the compute services, and the hosts' pulses when ``[monitor]
pulse`` is on; a host that is down and whose BMC (or management address)
confirms the failure is fenced, forced down and disabled, and its servers
evacuated. Several may run: one leads, the others stand by (see the
monitor guide). A compute API away at start is waited for, said once.
Runs until SIGTERM or SIGINT.
"""

import sys

from keystoneauth1 import exceptions as ks_exc
from oslo_config import cfg
from oslo_log import log as logging
from tooz import coordination

from nova_forcedown import cmd
from nova_forcedown import condition_log
from nova_forcedown import conf as nf_conf
from nova_forcedown.conf import compute_api as compute_api_conf
from nova_forcedown.conf import monitor as monitor_conf
from nova_forcedown import exception
from nova_forcedown.monitor import compute_api
from nova_forcedown.monitor import leadership as monitor_leadership
from nova_forcedown.monitor import manager
from nova_forcedown.monitor import readiness
from nova_forcedown.servicegroup import membership

LOG = logging.getLogger(__name__)
PROG = 'nova-forcedown-monitor'

DESCRIPTION = ('Watch the compute hosts of a Nova cloud through its compute '
               'API: fence a failed one through its BMC, force it down and '
               'evacuate its servers.')

# Seconds between two tries of a compute API away at start.
API_RETRY_INTERVAL = 2.0

API_DOWN_AT_START = condition_log.Messages(
    level=logging.WARNING,
    started='Cannot start yet, the compute API does not answer (%(error)s); '
            'trying again every %(interval)s s.',
    reminder='Still waiting for the compute API after %(seconds)d s '
             '(%(error)s).',
    ended='The compute API answers, after %(seconds)d s.')

_STARTUP_ERRORS = (exception.NovaForcedownException, coordination.ToozError,
                   ks_exc.ClientException, compute_api.Refused, OSError)


def main(argv=None):
    try:
        conf = nf_conf.make_conf(
            argv, description=DESCRIPTION,
            example='%(prog)s --config-file /etc/nova_forcedown/monitor.conf')
        api = _compute_api(conf)
    except (cfg.Error, ks_exc.ClientException,
            compute_api.CloudUnusable) as exc:
        print('%s: %s' % (PROG, exc), file=sys.stderr)
        return 2
    logging.set_defaults(default_log_levels=logging.get_default_log_levels() +
                         ['stevedore=ERROR'])
    logging.setup(conf, 'nova_forcedown')
    stop = cmd.stop_on_signals()
    try:
        started = _start(conf, api, stop)
    except _STARTUP_ERRORS as exc:
        print('%s: %s' % (PROG, exception.first_line(exc)), file=sys.stderr)
        return 1
    if started is None:
        LOG.info('Stopping on signal before the compute API answered.')
        return 0
    loops, leader = started
    stop.wait()
    LOG.info('Stopping on signal.')
    for loop in loops:
        loop.stop(conf.monitor.fence_timeout)
    leader.stop()
    return 0


def _compute_api(conf):
    """The compute API ``[compute_api]`` names; cfg.Error if it names none."""
    if not compute_api_conf.configured(conf):
        raise cfg.Error('[compute_api] says no compute API to act through: '
                        'set auth_type and its options, or cloud')
    if (conf.monitor.recovery_method != monitor_conf.AUTO and
            not conf.monitor.reserved_hosts):
        raise cfg.Error('[monitor] recovery_method %s needs reserved_hosts'
                        % conf.monitor.recovery_method)
    version = (compute_api.EVACUATE_STOPPED_VERSION
               if conf.monitor.evacuated_state ==
               monitor_conf.EVACUATED_STOPPED
               else compute_api.EVACUATE_ACTIVE_VERSION)
    return compute_api.from_conf(conf, version)


def _start(conf, api, stop):
    """(loops, leadership) of the running monitor; None if stopped first."""
    if not _until_api_answers(conf, api, stop):
        return None
    url = monitor_leadership.lock_url(conf)
    leader = monitor_leadership.Leadership(
        url, remind_every=conf.log_reminder_interval,
        lifetime=monitor_leadership.lifetime(conf, url)).start()
    pulse = (membership.MembershipReader(conf, reads_every=conf.monitor
                                         .interval)
             if conf.monitor.pulse else None)
    monitor = manager.Monitor(conf, api, leader, pulse=pulse)
    LOG.info('Monitor %(member)s acts through the compute API at '
             '%(endpoint)s, looks every %(interval)s s%(pulse)s; the leader '
             'holds the lock at %(url)s.',
             {'member': leader.member_id, 'endpoint': api.endpoint,
              'interval': conf.monitor.interval,
              'pulse': ' with the hosts\' pulses' if pulse else '',
              'url': leader.shown_url})
    loops = [monitor.start()]
    if conf.monitor.bmc_check_interval:
        loops.append(readiness.FenceReadiness(
            conf, leader, lambda: monitor.watched_hosts).start())
    return loops, leader


def _until_api_answers(conf, api, stop):
    """Wait until the compute API answers with what the monitor needs.

    Its microversions, and the compute services read once: credentials
    and policy proven before the first failure. False if ``stop`` is set
    meanwhile. A refusal (credentials, a role, an endpoint too old)
    raises Refused: waiting would not change it.
    """
    waiting = condition_log.ConditionLog(LOG, API_DOWN_AT_START,
                                         conf.log_reminder_interval)
    while True:
        try:
            api.check_versions()
            api.compute_services()
        except compute_api.Unreachable as exc:
            waiting.update(['api'], error=exc, interval=API_RETRY_INTERVAL)
            if stop.wait(API_RETRY_INTERVAL):
                return False
            continue
        waiting.update([])
        return True


if __name__ == '__main__':
    sys.exit(main())
