"""[database] options: oslo.db's own plus sync_on_startup."""

from oslo_config import cfg
from oslo_db import options as db_options

GROUP = 'database'

DATABASE_OPTS = [
    cfg.BoolOpt('sync_on_startup', default=False,
                help='Apply pending schema migrations when a service starts. '
                     'Convenient for development; production deployments '
                     'run "nova-forcedown-manage db sync" instead.'),
]

DEFAULT_CONNECTION = 'sqlite:///$state_path/nova_forcedown.sqlite'


def register_opts(conf):
    db_options.set_defaults(conf, connection=DEFAULT_CONNECTION)
    conf.register_opts(DATABASE_OPTS, group=GROUP)


def list_opts():
    return {GROUP: DATABASE_OPTS + db_options.database_opts}
