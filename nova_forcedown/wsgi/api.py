"""The compute API for uWSGI, gunicorn or mod_wsgi.

    gunicorn --workers 4 'nova_forcedown.wsgi.api:application'

The configuration file is ``$NOVA_FORCEDOWN_CONFIG_FILE``, by default
``/etc/nova_forcedown/nova_forcedown.conf`` (defaults apply when it does not
exist). The schema must already be migrated, unless ``[database]
sync_on_startup`` is set.
"""

import os

from oslo_log import log as logging

from nova_forcedown.api import deploy
from nova_forcedown import conf as nf_conf
from nova_forcedown.db import schema

CONFIG_FILE_ENV = 'NOVA_FORCEDOWN_CONFIG_FILE'
DEFAULT_CONFIG_FILE = '/etc/nova_forcedown/nova_forcedown.conf'


def init_application():
    path = os.environ.get(CONFIG_FILE_ENV, DEFAULT_CONFIG_FILE)
    args = ['--config-file', path] if os.path.exists(path) else []
    conf = nf_conf.make_conf(args, default_config_files=[])
    logging.setup(conf, 'nova_forcedown')
    schema.prepare(conf)
    return deploy.load_app(conf)


application = init_application()
