"""Configuration: a private ConfigOpts built at start-up and in every test.

Nothing in the package reads a global CONF; callers build one with
:func:`make_conf` and pass it down.
"""

from oslo_config import cfg
from oslo_log import log as logging

from nova_forcedown.conf import api
from nova_forcedown.conf import compute_api
from nova_forcedown.conf import coordination
from nova_forcedown.conf import database
from nova_forcedown.conf import default
from nova_forcedown.conf import fencing
from nova_forcedown.conf import glance
from nova_forcedown.conf import monitor
from nova_forcedown.conf import notifications
from nova_forcedown.conf import opts
from nova_forcedown.conf import pulse
from nova_forcedown.conf import quota
from nova_forcedown.conf import scheduler
from nova_forcedown.conf import wsgi

_GROUP_MODULES = (default, database, api, wsgi, notifications, fencing,
                  coordination, quota, monitor, compute_api, pulse,
                  scheduler, glance)

PROJECT = 'nova_forcedown'


def register_opts(conf):
    for module in _GROUP_MODULES:
        module.register_opts(conf)


def make_conf(args=None, default_config_files=None, default_config_dirs=None,
              register_cli=(), validate=True, description=None, usage=None,
              example=None):
    """Build, parse and validate a private ConfigOpts.

    ``args`` are command-line arguments (``--config-file`` and friends);
    ``None`` reads ``sys.argv``. ``register_cli`` are a command's own
    command-line options; ``description``, what the command does, heads
    its ``--help``, and ``usage`` and ``example`` replace the usage line
    that lists every logging option: the command's own options come
    first, oslo.log's after them. Invalid values raise ``cfg.Error``
    naming the option.
    """
    conf = cfg.ConfigOpts()
    register_opts(conf)
    conf.register_cli_opts(register_cli)
    logging.register_options(conf)
    usage = usage or '%(prog)s [--config-file PATH]... [options]'
    if example:
        # The usage line is not reflowed: the example keeps its line.
        usage += '\nexample: ' + example
    conf(args, project=PROJECT,
         default_config_files=default_config_files,
         default_config_dirs=default_config_dirs, description=description,
         usage=usage)
    if validate:
        validate_conf(conf)
    return conf


def validate_conf(conf):
    """Read every option, so a bad value fails now, naming the option.

    Also raises service_down_time above report_interval when needed, and
    sizes the database pool for the WSGI threads.
    """
    host_groups = monitor.register_host_sections(conf)
    for group, group_opts in opts.list_opts() + [
            (group, monitor.HOST_OPTS) for group in host_groups]:
        if group == monitor.HOST_GROUP_TEMPLATE:
            continue
        if group == compute_api.GROUP:
            # The auth plugin's options exist once the plugin is loaded.
            group_opts = [opt for opt in group_opts
                          if opt.dest in conf[group]]
        section = conf if group == 'DEFAULT' else conf[group]
        for opt in group_opts:
            _read(section, group, opt)
    default.check_service_down_time(conf)
    database.size_pool_for_threads(conf)


def _read(section, group, opt):
    """Read ``opt``; a bad value is ``[group] name is not valid: why``.

    oslo.config names where the value came from as a LocationInfo repr;
    an operator needs the section, the option and the reason.
    """
    try:
        getattr(section, opt.dest)
    except (cfg.ConfigFileValueError, cfg.ConfigSourceValueError) as exc:
        reason = exc.__context__
        if not isinstance(reason, ValueError):
            raise
        raise cfg.Error('[%s] %s is not valid: %s' % (
            group, opt.name, reason)) from None
