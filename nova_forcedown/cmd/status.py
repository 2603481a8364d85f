"""nova-forcedown-status: readiness checks to run before starting services.

``nova-forcedown-status upgrade check`` reads the same configuration files
as the other commands and reports, one row per check, whether the database
schema and the policy file are fit for this release. The exit code is the
worst result: 0 success, 1 warning, 2 failure (oslo.upgradecheck's codes).
"""

import sys

from oslo_config import cfg
from oslo_db import exception as db_exc
from oslo_log import log as logging
from oslo_upgradecheck import upgradecheck
import sqlalchemy as sa
from sqlalchemy import exc as sa_exc

from nova_forcedown import conf as nf_conf
from nova_forcedown.db import engine as db_engine
from nova_forcedown.db import schema
from nova_forcedown import exception
from nova_forcedown import policy

Code = upgradecheck.Code
Result = upgradecheck.Result
DESCRIPTION = ('Check that the database, its schema and the policy file '
               'are ready before the services start.')


class UpgradeChecks(upgradecheck.UpgradeCommands):
    """The checks, in the order they are reported."""

    display_title = 'nova-forcedown upgrade check results'

    def __init__(self, conf):
        super().__init__()
        self.conf = conf
        # Why the database cannot be reached at all (its driver is not
        # installed), reported by each check that needs it.
        self.database_unusable = None

    def _check_schema_revision(self):
        if self.database_unusable:
            return Result(Code.FAILURE, self.database_unusable)
        try:
            schema.check_migrated()
        except (exception.DatabaseNotMigrated,
                exception.DatabaseNewerThanCode,
                exception.DatabaseUnavailable) as exc:
            return Result(Code.FAILURE, str(exc))
        except (db_exc.DBError, sa_exc.SQLAlchemyError) as exc:
            return Result(Code.FAILURE, 'Cannot use the database: %s'
                          % exception.first_line(exc))
        return Result(Code.SUCCESS, 'Schema is at revision %s.'
                      % schema.head_revision())

    def _check_forced_down_column(self):
        if self.database_unusable:
            return Result(Code.FAILURE, self.database_unusable)
        try:
            inspector = sa.inspect(db_engine.get_engine())
            if not inspector.has_table('services'):
                return Result(Code.FAILURE,
                              'The services table does not exist: run '
                              'nova-forcedown-manage db sync.')
            columns = {c['name'] for c in inspector.get_columns('services')}
        except (db_exc.DBError, sa_exc.SQLAlchemyError) as exc:
            return Result(Code.FAILURE, 'Cannot use the database: %s'
                          % exception.first_line(exc))
        if 'forced_down' not in columns:
            return Result(Code.FAILURE,
                          'services.forced_down is missing, so no service '
                          'can be forced down: run nova-forcedown-manage db '
                          'sync.')
        return Result(Code.SUCCESS, 'Present.')

    def _check_policy_file(self):
        try:
            path, unknown = policy.check_policy_file(self.conf)
        except exception.PolicyFileInvalid as exc:
            return Result(Code.FAILURE, '%s%s' % (str(exc)[0].upper(),
                                                  str(exc)[1:]))
        if path is None:
            return Result(Code.SUCCESS,
                          'No policy file found; the defaults in code apply.')
        if unknown:
            return Result(Code.WARNING,
                          'Policy file %s sets rules that nova-forcedown '
                          'never checks (misspelt?): %s'
                          % (path, ', '.join(unknown)))
        return Result(Code.SUCCESS, 'Policy file %s is valid.' % path)

    _upgrade_checks = (
        ('Database schema revision', _check_schema_revision),
        ('services.forced_down column', _check_forced_down_column),
        ('Policy file', _check_policy_file),
    )


def _command_opt(checks):
    def add_parsers(subparsers):
        upgrade = subparsers.add_parser(
            'upgrade', help='Checks to run before or after an upgrade.')
        actions = upgrade.add_subparsers(dest='upgrade_command',
                                         required=True)
        check = actions.add_parser(
            'check', help='Report whether this deployment is ready.')
        check.add_argument('--json', action='store_true',
                           help='Print the results as JSON.')
        check.set_defaults(action_fn=checks.check)

    return cfg.SubCommandOpt('command', title='Commands',
                             handler=add_parsers)


def main(argv=None):
    checks = UpgradeChecks(conf=None)
    try:
        conf = nf_conf.make_conf(
            argv, register_cli=[_command_opt(checks)],
            description=DESCRIPTION,
            usage='%(prog)s [--config-file PATH]... upgrade check [--json]',
            example='%(prog)s --config-file /etc/nova_forcedown/'
                    'nova_forcedown.conf upgrade check')
    except cfg.Error as exc:
        print('nova-forcedown-status: %s' % exc, file=sys.stderr)
        return Code.FAILURE
    checks.conf = conf
    # UpgradeCommands.check() looks for --json on the library's module-level
    # conf, which only its own main() sets; point it at ours.
    upgradecheck.CONF = conf
    logging.set_defaults(default_log_levels=logging.get_default_log_levels() +
                         ['alembic=WARN',
                          db_engine.QUIET_CONNECTION_RETRIES])
    logging.setup(conf, 'nova_forcedown')
    # A check answers about the database as it is now: one try, no wait.
    db_engine.fail_at_once_at_start(conf)
    try:
        db_engine.configure(conf)
    except exception.DatabaseConnectionUnusable as exc:
        checks.database_unusable = 'Cannot use the database: %s.' % exc
    return upgradecheck.run(conf)


if __name__ == '__main__':
    sys.exit(main())
