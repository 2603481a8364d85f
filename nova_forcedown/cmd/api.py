"""nova-forcedown-api: the compute API under gunicorn.

Each gunicorn worker reads requests with waitress and runs them on
``[wsgi] threads`` threads (nova_forcedown/wsgi/worker.py says why).

``--dev`` is for trying it out: SQLite under state_path, migrations applied
on start, noauth2, 127.0.0.1:8774, and Nova's classic flavors (m1.tiny to
m1.xlarge) when there is no flavor yet. Values given in ``--config-file`` win
over these defaults; ``--host`` and ``--port`` win over everything.
"""

import argparse
import ipaddress
import os
import socket
import sys

from gunicorn.app import base as gunicorn_base
from oslo_config import cfg
from oslo_db import exception as db_exc
from oslo_log import log as logging
from sqlalchemy import exc as sa_exc

from nova_forcedown.api import deploy
from nova_forcedown import cmd
from nova_forcedown import conf as nf_conf
from nova_forcedown.conf import coordination as coordination_conf
from nova_forcedown.conf import database as nf_database
from nova_forcedown import context as nf_context
from nova_forcedown.db import engine as db_engine
from nova_forcedown.db import schema
from nova_forcedown import exception
from nova_forcedown.objects import flavor as flavor_obj
from nova_forcedown import policy as nf_policy
from nova_forcedown.servicegroup import membership
from nova_forcedown.wsgi import worker

LOG = logging.getLogger(__name__)
PROG = 'nova-forcedown-api'
DESCRIPTION = 'Serve the Nova-compatible compute API.'
# What keystonemiddleware needs to validate tokens and to tell clients
# where to get one.
KEYSTONE_NEEDS = ('www_authenticate_uri', 'auth_type')


def _server_arguments(argv):
    """Split off --dev, --host and --port; the rest is oslo.config's.

    ``--help`` shows these three first, then oslo.config's options.
    """
    parser = argparse.ArgumentParser(prog=PROG, add_help=False,
                                     usage=argparse.SUPPRESS)
    parser.add_argument('--dev', action='store_true',
                        help='Development mode: SQLite under state_path, '
                             'migrations applied on start, noauth2, '
                             '127.0.0.1:8774, the classic flavors. Not for '
                             'production.')
    parser.add_argument('--host', metavar='ADDR',
                        help='Address to listen on (overrides [wsgi] '
                             'host).')
    parser.add_argument('--port', type=int,
                        help='Port to listen on (overrides [wsgi] port).')
    server_args, rest = parser.parse_known_args(argv)
    if '-h' in rest or '--help' in rest:
        # oslo.config's help follows, with the one usage line.
        print(parser.format_help().replace('options:', 'server options:')
              .strip() + '\n')
    return server_args, rest


class StartupError(Exception):
    """A problem the operator must fix; printed as one line."""


def _dev_defaults(conf):
    conf.set_default('sync_on_startup', True, group='database')
    conf.set_default('auth_strategy', 'noauth2', group='api')
    conf.set_default('host', '127.0.0.1', group='wsgi')


def _check_keystone(conf):
    """Refuse Keystone auth without the settings it needs to work.

    Without them keystonemiddleware answers every request 500.
    """
    if conf.api.auth_strategy != 'keystone':
        return
    # Imported here, as deploy.py does: only Keystone auth needs it.
    from keystonemiddleware import auth_token
    for group, group_opts in auth_token.list_opts():
        conf.register_opts(group_opts, group=group)
    missing = [name for name in KEYSTONE_NEEDS
               if not conf.keystone_authtoken[name]]
    if missing:
        raise StartupError(
            'auth_strategy is keystone, but [keystone_authtoken] has no %s: '
            'set them and the auth plugin\'s options (auth_url, username, '
            '...; etc/nova_forcedown/nova_forcedown-keystone-dev.conf shows '
            'them), or try it out with --dev (noauth2)'
            % ' and no '.join(missing))
    _check_auth_plugin(conf)


def _check_auth_plugin(conf):
    """Refuse an auth plugin keystoneauth1 cannot build from the file."""
    from keystoneauth1 import exceptions as ks_exceptions
    from keystoneauth1 import loading as ks_loading
    try:
        ks_loading.load_auth_from_conf_options(conf, 'keystone_authtoken')
    except ks_exceptions.AuthPluginException as exc:
        raise StartupError(
            '[keystone_authtoken] auth_type %s: %s'
            % (conf.keystone_authtoken.auth_type, exc))


def _bind_address(conf, server_args):
    if server_args.host:
        conf.set_override('host', server_args.host, group='wsgi')
    if server_args.port is not None:
        conf.set_override('port', server_args.port, group='wsgi')
    return conf.wsgi.host, conf.wsgi.port


def _is_loopback(host):
    if host == 'localhost':
        return True
    try:
        return ipaddress.ip_address(host).is_loopback
    except ValueError:
        return False


def _check_bind(host, port):
    family = socket.AF_INET6 if ':' in host else socket.AF_INET
    with socket.socket(family, socket.SOCK_STREAM) as probe:
        probe.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        try:
            probe.bind((host, port))
        except OSError as exc:
            raise StartupError('cannot listen on %s:%s: %s'
                               % (host, port, exc.strerror))


def _dev_flavors():
    """The names of the classic flavors made now; none if any existed.

    Workers fork from this process: none may inherit its connections.
    """
    names = [flavor.name for flavor in flavor_obj.create_classic(
        nf_context.get_admin_context())]
    db_engine.get_engine().dispose()
    return names


def _banner(conf, dev, host, port, flavors=()):
    lines = ['nova-forcedown-api listening on http://%s:%s/' % (host, port),
             '  auth_strategy: %s' % conf.api.auth_strategy,
             '  database: %s' % nf_database.masked_connection(conf),
             '  migrations on start: %s' % conf.database.sync_on_startup,
             '  workers: %s x %s threads' % (conf.wsgi.workers,
                                             conf.wsgi.threads)]
    if dev:
        lines.insert(1, '  development mode (--dev): not for production')
    if flavors:
        lines.append('  flavors created: %s' % ', '.join(flavors))
    if conf.api.auth_strategy == 'noauth2':
        lines.append("  token: 'X-Auth-Token: admin:<project>' is an admin")
    return '\n'.join(lines)


class Server(gunicorn_base.BaseApplication):

    def __init__(self, app, options):
        self.application = app
        self.options = options
        super().__init__()

    def load_config(self):
        for key, value in self.options.items():
            self.cfg.set(key, value)

    def load(self):
        return self.application


def gunicorn_options(conf, host, port):
    """gunicorn's settings to serve on ``host``:``port`` as ``conf`` says."""
    return {
        'bind': '[%s]:%s' % (host, port) if ':' in host else
                '%s:%s' % (host, port),
        'workers': conf.wsgi.workers,
        'threads': conf.wsgi.threads,
        'worker_class': worker.configured(conf),
        'worker_connections': conf.wsgi.max_connections,
        'keepalive': conf.wsgi.client_socket_timeout,
        'graceful_timeout': 10,
        'timeout': 60,
        'accesslog': '-',
        'errorlog': '-',
        'proc_name': PROG,
        # Two servers on one host must not share a control socket.
        'control_socket': os.path.join(
            conf.state_path, '%s-%s.ctl' % (PROG, port)),
        # The arbiter and each worker exit without the final collections.
        'worker_exit': lambda arbiter, worker_: cmd.before_exit(),
        'on_exit': lambda arbiter: cmd.before_exit(),
    }


def _check_policy_file(conf):
    """Refuse a policy file that cannot be used; say unknown rules once.

    oslo.policy would read it at the first request, and answer every
    request 500 with a traceback.
    """
    path, unknown = nf_policy.check_policy_file(conf)
    if unknown:
        LOG.warning('Policy file %s sets rules that nova-forcedown never '
                    'checks (misspelt?): %s', path, ', '.join(unknown))


def _check_liveness_backend(conf):
    """With the tooz driver, the liveness backend checked at start.

    A URL tooz cannot use is refused; a backend that does not answer now
    is said once (states then come from the database heartbeats).
    """
    if conf.servicegroup_driver != 'tooz':
        return
    membership.check_backend_url(conf.coordination.backend_url)
    if not membership.answers(conf):
        LOG.warning('The coordination backend at %s does not answer: until '
                    'it does, service states come from the heartbeats '
                    'the agents keep in the database.',
                    coordination_conf.shown_url(
                        conf.coordination.backend_url))


def _load(argv, server_args):
    conf = nf_conf.make_conf(
        argv, validate=False, description=DESCRIPTION,
        usage='%(prog)s [--dev] [--host ADDR] [--port PORT] '
              '[--config-file PATH]... [options]',
        example='%(prog)s --config-file /etc/nova_forcedown/'
                'nova_forcedown.conf --port 8774')
    if server_args.dev:
        _dev_defaults(conf)
    nf_conf.validate_conf(conf)
    return conf


def main(argv=None):
    server_args, argv = _server_arguments(
        sys.argv[1:] if argv is None else argv)
    conf = None
    try:
        conf = _load(argv, server_args)
        logging.set_defaults(
            default_log_levels=logging.get_default_log_levels() +
            [db_engine.QUIET_CONNECTION_RETRIES])
        logging.setup(conf, 'nova_forcedown')
        host, port = _bind_address(conf, server_args)
        _check_keystone(conf)
        if conf.api.auth_strategy == 'noauth2' and not _is_loopback(host):
            raise StartupError('auth_strategy noauth2 is refused on the '
                               'non-loopback address %s' % host)
        _check_bind(host, port)
        _check_policy_file(conf)
        _check_liveness_backend(conf)
        db_engine.fail_at_once_at_start(conf)
        schema.prepare(conf)
        flavors = _dev_flavors() if server_args.dev else []
        app = deploy.load_app(conf)
    except cfg.Error as exc:
        print('%s: %s' % (PROG, exc), file=sys.stderr)
        return 2
    except (StartupError, exception.NovaForcedownException) as exc:
        print('%s: %s' % (PROG, exc), file=sys.stderr)
        return 1
    except (db_exc.DBError, sa_exc.SQLAlchemyError) as exc:
        print('%s: cannot use the database at %s: %s'
              % (PROG, nf_database.masked_connection(conf),
                 exception.first_line(exc)),
              file=sys.stderr)
        return 1
    print(_banner(conf, server_args.dev, host, port, flavors), flush=True)
    Server(app, gunicorn_options(conf, host, port)).run()
    return 0


if __name__ == '__main__':
    sys.exit(main())
