"""[pulse] options: the pulse each compute host sends to the backend.

``nova-forcedown-pulse`` runs on a compute host beside nova-compute and
heartbeats it into the coordination backend (``[coordination]
backend_url``) as the member ``nova-compute:<[DEFAULT] host>`` of the
group the tooz servicegroup driver uses, with a membership timeout of
seconds, so that the fault monitor sees a host fall silent whatever the
Nova cloud's own service_down_time.
"""

from oslo_config import cfg

GROUP = 'pulse'

PULSE_OPTS = [
    cfg.FloatOpt('interval', default=1.0, min=0.1,
                 help='Seconds between two heartbeats of the pulse to the '
                      'coordination backend. It must be smaller than '
                      'ttl.'),
    cfg.IntOpt('ttl', default=3, min=1,
               help='Seconds after the last heartbeat of the pulse at which '
                    'the coordination backend forgets the host (its tooz '
                    'membership timeout), and the monitor sees it silent. '
                    'It must be larger than interval: a few intervals, so '
                    'that a heartbeat late by a loaded host or a slow '
                    'network does not make the host a suspect. The '
                    'smaller it is, the sooner a failed host is seen; the '
                    'monitor confirms on the host\'s BMC before it fences '
                    'whatever the pulse said.'),
]


def register_opts(conf):
    conf.register_opts(PULSE_OPTS, group=GROUP)


def check_ttl(conf):
    """Raise cfg.Error, naming the options, unless ttl > interval."""
    if conf.pulse.ttl <= conf.pulse.interval:
        raise cfg.Error(
            '[pulse] ttl (%d s) must be larger than [pulse] interval '
            '(%g s): a host would drop out of the group between two '
            'heartbeats.' % (conf.pulse.ttl, conf.pulse.interval))


def list_opts():
    return {GROUP: PULSE_OPTS}
