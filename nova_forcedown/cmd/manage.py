"""nova-forcedown-manage: database and service administration."""

import sys

from oslo_config import cfg
from oslo_db import exception as db_exc
from oslo_log import log as logging
import sqlalchemy as sa
from sqlalchemy import exc as sa_exc

from nova_forcedown import conf as nf_conf
from nova_forcedown.db import api as db_api
from nova_forcedown.db import migration
from nova_forcedown import exception

LOG = logging.getLogger(__name__)


def _db_sync(conf):
    migration.db_sync(revision=conf.command.revision)
    print('Database is at revision %s.' % migration.db_version())


def _db_version(conf):
    print(migration.db_version() or 'None (empty database)')


def _add_db_parsers(subparsers):
    db = subparsers.add_parser('db', help='Database schema commands.')
    db_commands = db.add_subparsers(dest='db_command', required=True)
    sync = db_commands.add_parser('sync', help='Upgrade the schema; safe to '
                                               'run again.')
    sync.add_argument('--revision', default='head',
                      help='Revision to upgrade to (default: head).')
    sync.set_defaults(func=_db_sync)
    version = db_commands.add_parser('version',
                                     help='Print the schema revision.')
    version.set_defaults(func=_db_version)


def _add_parsers(subparsers):
    _add_db_parsers(subparsers)


COMMAND_OPT = cfg.SubCommandOpt('command', title='Commands',
                                handler=_add_parsers)


def main(argv=None):
    try:
        conf = nf_conf.make_conf(argv, register_cli=[COMMAND_OPT])
    except cfg.Error as exc:
        print('nova-forcedown-manage: %s' % exc, file=sys.stderr)
        return 2
    logging.set_defaults(default_log_levels=logging.get_default_log_levels() +
                         ['alembic=WARN'])
    logging.setup(conf, 'nova_forcedown')
    try:
        db_api.configure(conf)
        conf.command.func(conf)
    except exception.NovaForcedownException as exc:
        print('nova-forcedown-manage: %s' % exc, file=sys.stderr)
        return 1
    except (db_exc.DBError, sa_exc.SQLAlchemyError) as exc:
        print('nova-forcedown-manage: cannot use the database at %s: %s'
              % (_safe_url(conf), _one_line(exc)), file=sys.stderr)
        return 1
    return 0


def _safe_url(conf):
    return sa.engine.make_url(conf.database.connection).render_as_string(
        hide_password=True)


def _one_line(exc):
    exc = getattr(exc, 'inner_exception', None) or exc
    return str(getattr(exc, 'orig', None) or exc).strip().splitlines()[0]


if __name__ == '__main__':
    sys.exit(main())
