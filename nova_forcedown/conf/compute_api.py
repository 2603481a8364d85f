"""[compute_api] options: the compute API the fault monitor acts through.

The monitor is a client of any endpoint that speaks Nova's compute API:
an OpenStack Nova cloud behind Keystone, or this project's own API with
any of its auth strategies. Its session is keystoneauth1's, loaded from
this group with keystoneauth1's own options (``auth_type`` and the
plugin's options, TLS, ``timeout``; ``endpoint_override``,
``region_name``, ``valid_interfaces`` to find the endpoint in the
catalog), or from a cloud of a clouds.yaml file (``cloud``).
"""

from keystoneauth1 import loading as ks_loading
from oslo_config import cfg

GROUP = 'compute_api'

# Seconds one request to the compute API may take, unless ``timeout``
# says otherwise: a request that hangs must not hold the monitor's look.
DEFAULT_TIMEOUT = 10

COMPUTE_API_OPTS = [
    cfg.StrOpt('cloud',
               help='A cloud of a clouds.yaml file (found where '
                    'openstacksdk looks for one: ./clouds.yaml, '
                    '~/.config/openstack/, /etc/openstack/, or '
                    'OS_CLIENT_CONFIG_FILE) to reach the compute API with, '
                    'instead of this section\'s auth options.'),
]


def register_opts(conf):
    conf.register_opts(COMPUTE_API_OPTS, group=GROUP)
    ks_loading.register_session_conf_options(conf, GROUP)
    ks_loading.register_auth_conf_options(conf, GROUP)
    ks_loading.register_adapter_conf_options(conf, GROUP)
    conf.set_default('service_type', 'compute', group=GROUP)
    conf.set_default('timeout', DEFAULT_TIMEOUT, group=GROUP)


def configured(conf):
    """Whether the operator said how to reach the compute API."""
    section = conf[GROUP]
    return bool(section.cloud or section.auth_type)


def list_opts():
    """The options for the generator, the password plugin's as example.

    With the defaults :func:`register_opts` gives keystoneauth1's.
    """
    session = ks_loading.get_session_conf_options()
    adapter = ks_loading.get_adapter_conf_options(include_deprecated=False)
    cfg.set_defaults(session, timeout=DEFAULT_TIMEOUT)
    cfg.set_defaults(adapter, service_type='compute')
    return {GROUP: (COMPUTE_API_OPTS + session +
                    ks_loading.get_auth_common_conf_options() +
                    ks_loading.get_auth_plugin_conf_options('password') +
                    adapter)}
