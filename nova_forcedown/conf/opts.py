"""Options for oslo-config-generator, listed explicitly."""

from oslo_config import cfg
from oslo_db import options as db_options

from nova_forcedown.conf import api
from nova_forcedown.conf import compute_api
from nova_forcedown.conf import coordination
from nova_forcedown.conf import database
from nova_forcedown.conf import default
from nova_forcedown.conf import fencing
from nova_forcedown.conf import glance
from nova_forcedown.conf import monitor
from nova_forcedown.conf import notifications
from nova_forcedown.conf import pulse
from nova_forcedown.conf import quota
from nova_forcedown.conf import scheduler
from nova_forcedown.conf import wsgi


def list_opts():
    groups = {}
    for module in (default, database, api, wsgi, notifications,
                   fencing, coordination, quota, monitor, compute_api,
                   pulse, scheduler, glance):
        for group, opts in module.list_opts().items():
            groups.setdefault(group, []).extend(opts)
    return sorted(groups.items())


def set_defaults():
    """Let the generator show the project's database default.

    oslo-config-generator calls this hook with no argument before it lists
    the options, and prints the defaults of the option objects themselves.
    """
    cfg.set_defaults(db_options.database_opts,
                     connection=database.DEFAULT_CONNECTION)
