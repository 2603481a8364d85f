"""[glance] options: the image service a new server's image is read from.

Nova reads the image of every server it creates from Glance. Here the
image service is optional: with one in the catalog of the caller's token
(``[api] auth_strategy = keystone``) or at ``endpoint_override``, a
create reads ``imageRef`` there and refuses as Nova refuses (unknown, not
active, too big for the flavor); with neither, any UUID is an image.
keystoneauth1's own options find the endpoint (``valid_interfaces``,
``region_name``, ``endpoint_override``) and bound the request
(``timeout``, TLS).
"""

from keystoneauth1 import loading as ks_loading
from oslo_config import cfg

GROUP = 'glance'

# Seconds a read of the image service may take: a create that waits on
# one that hangs answers 503 after this.
DEFAULT_TIMEOUT = 10


def register_opts(conf):
    ks_loading.register_session_conf_options(conf, GROUP)
    ks_loading.register_adapter_conf_options(conf, GROUP)
    conf.set_default('service_type', 'image', group=GROUP)
    conf.set_default('timeout', DEFAULT_TIMEOUT, group=GROUP)


def list_opts():
    session = ks_loading.get_session_conf_options()
    adapter = ks_loading.get_adapter_conf_options(include_deprecated=False)
    cfg.set_defaults(session, timeout=DEFAULT_TIMEOUT)
    cfg.set_defaults(adapter, service_type='image')
    return {GROUP: session + adapter}
