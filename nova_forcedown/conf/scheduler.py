"""[scheduler] options: how a new server's build is retried elsewhere."""

from oslo_config import cfg

GROUP = 'scheduler'

SCHEDULER_OPTS = [
    cfg.IntOpt('max_attempts', default=3, min=1,
               help="Most hosts a new server's build is tried on, as "
                    "Nova's option of that name: when a host's driver "
                    "fails to spawn it, the server is placed on another "
                    "host that takes it (never one tried before), until "
                    "this many failed; it is then in error, \"Exceeded "
                    "maximum number of retries\". 1 means no retry."),
]


def register_opts(conf):
    conf.register_opts(SCHEDULER_OPTS, group=GROUP)


def list_opts():
    return {GROUP: SCHEDULER_OPTS}
