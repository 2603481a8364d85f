"""nova-forcedown-pulse: this compute host's pulse, for the fault monitor.

It runs on a compute host beside nova-compute (OpenStack Nova's, or this
project's agent) and heartbeats the host into the coordination backend
(``[coordination] backend_url``) as the member ``nova-compute:<host>``
of the group the tooz servicegroup driver uses, every ``[pulse]
interval`` with a membership timeout of ``[pulse] ttl`` seconds: the
monitor sees a host fall silent within seconds, whatever the cloud's
service_down_time. The heartbeat loop is the tooz driver's own
(servicegroup/backend_heartbeat.py). It needs no database, and imports
nothing of this project's database or objects.

A backend that does not answer is said once, reminded, and said once
more when it answers again; the pulse keeps trying meanwhile. SIGTERM or
SIGINT makes it leave the group at once and exit 0: the host is then a
suspect at once, as it would be once its TTL ran out. A clean stop is
no failure, but the monitor cannot tell the two apart from the group
alone, and it need not: it confirms a suspect on its BMC before it
fences, and a host shut down for maintenance is disabled in Nova first
(the monitor watches only enabled hosts). Leaving at once says sooner
what is true, rather than leaving a stopped pulse counted alive for
another TTL.
"""

import collections
import sys

from oslo_config import cfg
from oslo_log import log as logging

from nova_forcedown import cmd
from nova_forcedown import condition_log
from nova_forcedown import conf as nf_conf
from nova_forcedown.conf import coordination as coordination_conf
from nova_forcedown.conf import pulse as pulse_conf
from nova_forcedown.servicegroup import backend_heartbeat
from nova_forcedown.servicegroup import membership

LOG = logging.getLogger(__name__)
PROG = 'nova-forcedown-pulse'

DESCRIPTION = ('Send this compute host\'s pulse to the coordination backend '
               'for the fault monitor: heartbeats every second or so, '
               'forgotten within seconds once they stop.')

BINARY = 'nova-compute'

CLI_OPTS = [
    # [DEFAULT] host is not a command-line option; --host overrides it.
    cfg.StrOpt('host', dest='pulse_host', metavar='HOST',
               help='Name of this compute host, as nova-compute names it '
                    '(default: [DEFAULT] host, this machine\'s name).'),
]

PULSES_DOWN = condition_log.Messages(
    level=logging.WARNING,
    started='Heartbeats to the coordination backend failed (%(error)s); '
            'retrying every %(interval)s s.',
    reminder='Heartbeats to the coordination backend still fail after '
             '%(seconds)d s (%(error)s).',
    ended='Recovered: heartbeats reach the coordination backend again, '
          'after %(seconds)d s.')

# What the heartbeat loop heartbeats: anything with a binary and a host.
Member = collections.namedtuple('Member', 'binary host')


def main(argv=None):
    try:
        conf = nf_conf.make_conf(
            argv, register_cli=CLI_OPTS, description=DESCRIPTION,
            example='%(prog)s --config-file /etc/nova_forcedown/pulse.conf '
                    '--host compute-7')
        pulse_conf.check_ttl(conf)
    except cfg.Error as exc:
        return _error(exc)
    # stevedore warns of a backend tooz cannot load: said below instead.
    logging.set_defaults(default_log_levels=logging.get_default_log_levels() +
                         ['stevedore=ERROR'])
    logging.setup(conf, 'nova_forcedown')
    try:
        membership.check_backend_url(conf.coordination.backend_url)
    except cfg.Error as exc:
        return _error(exc)
    stop = cmd.stop_on_signals()
    member = Member(BINARY, conf.pulse_host or conf.host)
    shown = {'member': membership.member_id(member).decode('utf-8'),
             'url': coordination_conf.shown_url(
                 conf.coordination.backend_url),
             'interval': '%g' % conf.pulse.interval, 'ttl': conf.pulse.ttl}
    LOG.info('Pulsing %(member)s to %(url)s every %(interval)s s, TTL '
             '%(ttl)d s.', shown)
    beats = backend_heartbeat.BackendHeartbeat(
        conf, [member], interval=conf.pulse.interval, ttl=conf.pulse.ttl,
        check_every=conf.pulse.ttl, failing=PULSES_DOWN).start()
    stop.wait()
    beats.stop(conf.pulse.interval)
    # Past the TTL, the member is gone whether it left or not.
    problem = beats.leave(conf.pulse.ttl)
    if problem is None:
        LOG.info('Stopping on signal: %(member)s left the group.', shown)
    else:
        LOG.warning('Stopping on signal without leaving the group '
                    '(%(problem)s): %(member)s stays in it until its TTL '
                    'of %(ttl)d s runs out.', dict(shown, problem=problem))
    return 0


def _error(message):
    """A configuration error, said in one line: exit status 2."""
    print('%s: %s' % (PROG, message), file=sys.stderr)
    return 2


if __name__ == '__main__':
    sys.exit(main())
