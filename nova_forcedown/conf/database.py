"""[database] options: oslo.db's own plus sync_on_startup."""

import re

from oslo_config import cfg
from oslo_db import options as db_options
import sqlalchemy as sa

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


def masked_connection(conf):
    """``[database] connection`` with its password masked, for messages."""
    try:
        return sa.engine.make_url(conf.database.connection).render_as_string(
            hide_password=True)
    except sa.exc.ArgumentError:
        # Not a URL: what looks like a password is masked all the same.
        return re.sub(r'(//[^/:@]*:)[^@]*@', r'\1***@',
                      conf.database.connection)


def size_pool_for_threads(conf):
    """Default ``max_pool_size`` to ``[wsgi] threads``: one per thread.

    With oslo.db's 5 under 8 threads, every request beyond the fifth at
    once opens a connection and closes it after (an overflow connection
    is not kept): a connection attempt per request, which on a loaded
    server can outlast connect_timeout. A value in the file wins.
    """
    conf.set_default('max_pool_size', conf.wsgi.threads, group=GROUP)


def list_opts():
    return {GROUP: DATABASE_OPTS + db_options.database_opts}
