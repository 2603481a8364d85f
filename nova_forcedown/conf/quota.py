"""[quota] options: the limits Nova's quotas put on what a project keeps.

Only the limit on a server's metadata items is enforced here (Nova's
``metadata_items``, the same for every project). Instance, core and RAM
quotas are not: a project may create servers until the hosts are full.
"""

from oslo_config import cfg

GROUP = 'quota'

QUOTA_OPTS = [
    cfg.IntOpt('metadata_items', default=128, min=-1,
               help='Most metadata items (key/value pairs) a server may '
                    'have. A write through the server metadata API that '
                    'would leave more is refused with 403 "Maximum number '
                    'of metadata items exceeds N", as in Nova. -1 means '
                    'no limit.'),
]


def register_opts(conf):
    conf.register_opts(QUOTA_OPTS, group=GROUP)


def list_opts():
    return {GROUP: QUOTA_OPTS}
