"""Options for oslo-config-generator, listed explicitly."""

from nova_forcedown.conf import api
from nova_forcedown.conf import database
from nova_forcedown.conf import default
from nova_forcedown.conf import wsgi


def list_opts():
    groups = {}
    for module in (default, database, api, wsgi):
        for group, opts in module.list_opts().items():
            groups.setdefault(group, []).extend(opts)
    return sorted(groups.items())


def set_defaults(conf):
    """Let the generator show the project's database default."""
    database.register_opts(conf)
