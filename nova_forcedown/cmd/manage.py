"""nova-forcedown-manage: database, service, host, aggregate, zone and
flavor administration."""

import datetime
import re
import signal
import sys
import threading
import warnings

from dateutil import parser as dateutil_parser
from oslo_config import cfg
from oslo_db import exception as db_exc
from oslo_log import log as logging
from oslo_utils import timeutils
import prettytable
from sqlalchemy import exc as sa_exc
from stevedore import exception as stevedore_exc

from nova_forcedown import conf as nf_conf
from nova_forcedown.conf import database as nf_database
from nova_forcedown.conf import monitor as monitor_conf
from nova_forcedown import context as nf_context
from nova_forcedown.db import engine as db_engine
from nova_forcedown.db import purge as db_purge
from nova_forcedown.db import schema
from nova_forcedown import exception
from nova_forcedown.monitor.drivers import base as fence_drivers
from nova_forcedown.monitor import readiness as monitor_readiness
from nova_forcedown import notifications
from nova_forcedown.notifications import listener
from nova_forcedown import objects
from nova_forcedown.objects import aggregate as aggregate_obj
from nova_forcedown.objects import base as objects_base
from nova_forcedown.objects import flavor as flavor_obj
from nova_forcedown.objects import host_operations
from nova_forcedown.objects import service as service_obj
from nova_forcedown.objects import service_history
from nova_forcedown.servicegroup import api as servicegroup_api
from nova_forcedown.servicegroup import status as service_status
from nova_forcedown.servicegroup import zones

LOG = logging.getLogger(__name__)


def _db_sync(conf):
    schema.db_sync(revision=conf.command.revision)
    print('Database is at revision %s.' % schema.db_version())


def _db_version(conf):
    print(schema.db_version() or 'None (empty database)')


# Exit codes of "db purge", as Nova's "nova-manage db purge" has them.
PURGED = 0
PURGE_ARGUMENTS_MISSING = 1
PURGE_BAD_BEFORE = 2
NOTHING_PURGED = 3


def _db_purge(conf):
    """Delete the history older than --before (or all of it, --all)."""
    args = conf.command
    if args.before is None and not args.all:
        return _fail(PURGE_ARGUMENTS_MISSING,
                     'either --before or --all is required')
    if args.before is not None and args.all:
        return _fail(PURGE_ARGUMENTS_MISSING,
                     '--before and --all exclude each other')
    before = None
    if args.before is not None:
        try:
            before = _parse_before(args.before)
        except ValueError as exc:
            return _fail(PURGE_BAD_BEFORE,
                         'invalid value for --before: %s' % exc)
    schema.check_migrated()
    context = nf_context.get_operator_context()
    if args.dry_run:
        rows = db_purge.count(context, before)
    else:
        rows = db_purge.purge(context, before, max_rows=args.max_rows)
    if args.verbose or args.dry_run:
        print(_table(('Table', 'Rows To Delete' if args.dry_run
                      else 'Rows Deleted'), rows.items()))
    print(_purge_summary(sum(rows.values()), before, args.dry_run))
    return PURGED if any(rows.values()) else NOTHING_PURGED


def _parse_before(text, now=None):
    """The cutoff of ``--before TEXT`` in UTC; ValueError says why not.

    As Nova reads it (dateutil: ``date``'s output, ``YYYY-MM-DD[
    HH:MM[:SS]]``, ISO 8601), but not fuzzily: a phrase such as "30 days
    ago" is refused, not read as the 30th of this month. A time without a
    zone is UTC, as the database keeps times; a zone name dateutil does not
    know (CEST) is refused, not ignored. A bare number ("1", "99") is
    refused, not read as a day of this month or a year. A cutoff in the
    future is refused: --all says that.
    """
    if re.fullmatch(r'\s*[+-]?\d+\s*', text):
        raise ValueError(
            '"%s" is a number, not a date: give one such as 2026-10-21'
            % text)
    with warnings.catch_warnings():
        warnings.simplefilter('error', dateutil_parser.UnknownTimezoneWarning)
        try:
            when = dateutil_parser.parse(text)
        except dateutil_parser.UnknownTimezoneWarning:
            raise ValueError('%s: its time zone is unknown; give a UTC '
                             'offset (+02:00) or the time in UTC '
                             '("date -u")' % text)
        except dateutil_parser.ParserError as exc:
            # dateutil says why first: "month must be in 1..12: <text>".
            raise ValueError(
                '"%s" is not a date (%s): give one such as 2026-10-21 or '
                '"2026-10-21 12:00" (UTC); for an age, let date(1) count: '
                '--before "$(date -u -d \'30 days ago\')"'
                % (text, str(exc).split(':')[0]))
        except OverflowError as exc:
            raise ValueError('%s: %s' % (text, exc))
    if when.tzinfo is not None:
        try:
            when = when.astimezone(datetime.timezone.utc).replace(
                tzinfo=None)
        except OverflowError:
            raise ValueError('%s: in UTC it is out of the years 1 to 9999'
                             % text)
    if when > (now or timeutils.utcnow()):
        raise ValueError('%s is in the future; --all purges all that may '
                         'go' % _utc_text(when))
    return when


def _utc_text(when):
    return '%s UTC' % when.isoformat(' ')


def _purge_summary(total, before, dry_run):
    older = '' if before is None else ' older than %s' % _utc_text(before)
    if not total:
        return 'Nothing to purge%s.' % older
    if dry_run:
        return ('Would delete %d row(s)%s; nothing was deleted (--dry-run).'
                % (total, older))
    return 'Deleted %d row(s)%s.' % (total, older)


def _fail(code, message):
    print('nova-forcedown-manage: %s' % message, file=sys.stderr)
    return code


def _add_db_purge_parser(db_commands):
    purge = db_commands.add_parser(
        'purge', help='Delete history older than a date: completed and '
                      'error migrations, instance actions and their '
                      'events, service history, soft-deleted rows. Nothing '
                      'an agent or the force-up guard still reads goes. '
                      'Exits 0 when rows were deleted (or would be, with '
                      '--dry-run), 1 without --before or --all, 2 on '
                      'a bad --before, 3 when there was nothing to purge.')
    purge.add_argument('--before', metavar='DATE',
                       help='Purge what is older than DATE (UTC unless it '
                            'says its zone): "2026-10-21", "2026-10-21 '
                            '12:00", the output of "date -u".')
    purge.add_argument('--all', action='store_true',
                       help='Purge all that may go, whatever its age.')
    purge.add_argument('--dry-run', action='store_true',
                       help='Print the rows each table would lose; delete '
                            'nothing.')
    purge.add_argument('--max-rows', type=_count(1, db_purge.MAX_ROWS),
                       default=db_purge.DEFAULT_MAX_ROWS,
                       help='Rows of a table each transaction deletes at '
                            'most (default %d, at most %d); batches follow '
                            'one another until nothing is left.'
                            % (db_purge.DEFAULT_MAX_ROWS, db_purge.MAX_ROWS))
    purge.add_argument('--verbose', action='store_true',
                       help='Print the rows deleted from each table.')
    purge.set_defaults(func=_db_purge)


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
    _add_db_purge_parser(db_commands)


SERVICE_COLUMNS = ('Id', 'UUID', 'Binary', 'Host', 'Zone', 'Status', 'State',
                   'Forced Down', 'Updated At', 'Disabled Reason')


def _service_list(conf):
    """Every service but the API ones, with state and status as the API."""
    schema.check_migrated()
    is_up = servicegroup_api.API(conf).liveness()
    context = nf_context.get_operator_context()
    service_zones = zones.ServiceZones.load(context, conf)
    services = service_obj.ServiceList.get_all(context, include_api=False)
    print(_table(SERVICE_COLUMNS, [
        _service_row(service, service_zones.zone(service),
                     is_up(service))
        for service in services]))


def _service_row(service, zone, is_up):
    return (service.id, service.uuid, service.binary, service.host, zone,
            service_status.status(service), service_status.state(is_up),
            service.forced_down, objects_base.timestamp(service.updated_at),
            service.disabled_reason)


def _table(headers, rows):
    table = prettytable.PrettyTable(headers)
    table.align = 'l'
    for row in rows:
        table.add_row(row)
    return table.get_string()


def _update_compute(conf, changes):
    """Write ``changes`` to the nova-compute service of the command's HOST.

    As the API does: guarded, and recorded in the service's history.
    """
    schema.check_migrated()
    host = conf.command.service_host
    try:
        return service_obj.Service.update_compute(
            nf_context.get_operator_context(), changes, host=host, conf=conf)
    except exception.HostNotFound:
        raise exception.HostBinaryNotFound(
            host=host, binary=service_obj.COMPUTE_BINARY)


def _service_force_down(conf):
    changes = {'forced_down': not conf.command.unset}
    service = _update_compute(conf, changes)
    if service_obj.marks_shutdown(conf, changes):
        print('Service nova-compute on %s is forced down and its servers '
              'are marked shut down ([DEFAULT] '
              'force_down_marks_instances_shutdown).' % service.host)
    elif service.forced_down:
        print('Service nova-compute on %s is forced down: it reports down '
              'until "service force-down %s --unset".'
              % (service.host, service.host))
    else:
        print('Service nova-compute on %s is no longer forced down.'
              % service.host)


def _service_disable(conf):
    service = _update_compute(conf, {'disabled': True,
                                     'disabled_reason': conf.command.reason})
    print('Service nova-compute on %s is disabled.' % service.host)


def _service_enable(conf):
    service = _update_compute(conf, {'disabled': False,
                                     'disabled_reason': None})
    print('Service nova-compute on %s is enabled.' % service.host)


HISTORY_COLUMNS = ('Id', 'Time', 'Event', 'Changes', 'User', 'Project',
                   'Request Id')


def _service_history(conf):
    """The history of the nova-compute service of HOST, newest first."""
    schema.check_migrated()
    context = nf_context.get_operator_context()
    host = conf.command.service_host
    entries = service_history.get_for_host(context, host,
                                           limit=conf.command.limit)
    if not entries and not service_obj.Service.host_exists(context, host):
        raise exception.HostBinaryNotFound(
            host=host, binary=service_obj.COMPUTE_BINARY)
    print(_table(HISTORY_COLUMNS, [
        (entry.id, objects_base.timestamp(entry.created_at), entry.event,
         _changes_text(service_history.changes(entry)), entry.user_id or '-',
         entry.project_id or '-', entry.request_id)
        for entry in entries]))


def _changes_text(changes):
    return '; '.join('%s: %s -> %s' % change for change in changes)


def _add_service_parsers(subparsers):
    service = subparsers.add_parser(
        'service', help='Compute service commands, on the database.')
    commands = service.add_subparsers(dest='service_command', required=True)
    commands.add_parser('list', help='List services with their state.'
                        ).set_defaults(func=_service_list)
    force_down = commands.add_parser(
        'force-down', help='Mark the nova-compute service of HOST down at '
                           'once, or clear the mark with --unset.')
    force_down.add_argument('service_host', metavar='HOST')
    force_down.add_argument('--unset', action='store_true',
                            help='Clear forced_down.')
    force_down.set_defaults(func=_service_force_down)
    disable = commands.add_parser(
        'disable', help='Disable the nova-compute service of HOST.')
    disable.add_argument('service_host', metavar='HOST')
    disable.add_argument('--reason', help='Why, shown as disabled_reason.')
    disable.set_defaults(func=_service_disable)
    enable = commands.add_parser(
        'enable', help='Enable the nova-compute service of HOST.')
    enable.add_argument('service_host', metavar='HOST')
    enable.set_defaults(func=_service_enable)
    history = commands.add_parser(
        'history', help='Show who forced the nova-compute service of HOST '
                        'down or cleared that, disabled or enabled it, '
                        'when and what changed, newest first.')
    history.add_argument('service_host', metavar='HOST')
    history.add_argument('--limit', type=_count(1),
                         help='Show only the newest LIMIT entries.')
    history.set_defaults(func=_service_history)


HOST_SERVER_COLUMNS = ('UUID', 'Name', 'VM State', 'Power State',
                       'Task State')


def _host_mark_shutdown(conf):
    """Mark every server of a fenced HOST powered off, as the API does."""
    schema.check_migrated()
    host = conf.command.host_name
    changes = host_operations.mark_shutdown(
        nf_context.get_operator_context(), host,
        servicegroup_api.API(conf).liveness())
    _print_host_changes(changes, 'Marked %d server(s) of %s shut down.'
                        % (len(changes), host))


def _host_reset_state(conf):
    """Reset the state of every server of a fenced HOST, as the API does."""
    schema.check_migrated()
    host = conf.command.host_name
    state = 'active' if conf.command.active else 'error'
    changes = host_operations.reset_state(
        nf_context.get_operator_context(), host, state,
        servicegroup_api.API(conf).liveness())
    _print_host_changes(changes, 'Reset %d server(s) of %s to %s.'
                        % (len(changes), host, state))


# The history event of a host switched back on through its BMC.
UNFENCE_EVENT = 'unfence'


def _host_power_on(conf):
    """Switch a fenced HOST back on through its BMC, and record it.

    With the fence driver and BMC of its [monitor_host:HOST] section.
    """
    schema.check_migrated()
    host = conf.command.host_name
    settings = monitor_conf.host_settings(conf, host)
    try:
        driver = fence_drivers.load(settings, conf.monitor.fence_timeout)
        driver.power_on()
    except stevedore_exc.NoMatches:
        raise exception.Invalid('[monitor] fence_driver %r does not exist'
                                % settings.fence_driver)
    except fence_drivers.FenceError as exc:
        raise exception.Invalid('cannot switch %s on: %s' % (host, exc))
    service_history.record(nf_context.get_operator_context(), host,
                           UNFENCE_EVENT,
                           [service_history.Change('power', 'off', 'on')])
    print('Host %s is switched on. Once its agent heartbeats and has cleaned '
          'up after the evacuations, clear its force-down: "service '
          'force-down %s --unset".' % (host, host))


FENCE_STATUS_COLUMNS = ('Host', 'Fence Driver', 'Power', 'Health',
                        'Problem')


def _host_fence_status(conf):
    """Read each HOST's power through its fence driver, as the monitor would.

    Every compute host when none is named. Exit 1 when one cannot be read:
    the monitor could not fence it.
    """
    schema.check_migrated()
    hosts = conf.command.host_names or sorted(
        service.host for service in service_obj.ServiceList.get_records(
            nf_context.get_operator_context(),
            binary=service_obj.COMPUTE_BINARY, include_api=False))
    rows = [_fence_status_row(conf, host) for host in hosts]
    print(_table(FENCE_STATUS_COLUMNS, rows))
    failing = sum(1 for row in rows if row[-1])
    print('%d of %d host(s) can be fenced.' % (
        len(rows) - failing, len(rows)))
    return 1 if failing else 0


def _fence_status_row(conf, host):
    status, why = monitor_readiness.fence_status(conf, host)
    driver = monitor_conf.host_settings(conf, host).fence_driver
    if status is None:
        return (host, driver, '', '', why)
    return (host, driver, status.power, ', '.join(
        [status.health or 'unknown', *status.faults]), '')


def _print_host_changes(changes, summary):
    """A row per server changed, each state as "old -> new" if it moved."""
    def shown(change, field):
        old = getattr(change.before, field)
        new = getattr(change.after, field)
        return old if old == new else '%s -> %s' % (old, new)

    if changes:
        print(_table(HOST_SERVER_COLUMNS, [
            (change.after.uuid, change.after.display_name,
             shown(change, 'vm_state'), shown(change, 'power_state'),
             shown(change, 'task_state'))
            for change in changes]))
    print(summary)


def _add_host_parsers(subparsers):
    commands = subparsers.add_parser(
        'host', help='Host-wide server commands, for a fenced host whose '
                     'nova-compute service is down.'
    ).add_subparsers(dest='host_command', required=True)
    mark = commands.add_parser(
        'mark-shutdown', help='Mark every server of HOST powered off '
                              '(power_state shutdown); refused while its '
                              'service is up.')
    mark.add_argument('host_name', metavar='HOST')
    mark.set_defaults(func=_host_mark_shutdown)
    reset = commands.add_parser(
        'reset-state', help='Reset every server of HOST to error (or '
                            'active) and clear its task; refused while its '
                            'service is up.')
    reset.add_argument('host_name', metavar='HOST')
    reset.add_argument('--active', action='store_true',
                       help='Reset to active rather than error.')
    reset.set_defaults(func=_host_reset_state)
    power_on = commands.add_parser(
        'power-on', help='Switch a fenced HOST back on through the BMC of '
                         'its [monitor_host:HOST] section, and record it in '
                         'its history.')
    power_on.add_argument('host_name', metavar='HOST')
    power_on.set_defaults(func=_host_power_on)
    fence_status = commands.add_parser(
        'fence-status', help='Read the power of each HOST (every compute '
                             'host by default) through the fence driver of '
                             'its [monitor_host:HOST] section, as the '
                             'monitor does before it fences; exit 1 when '
                             'one cannot be fenced.')
    fence_status.add_argument('host_names', metavar='HOST', nargs='*')
    fence_status.set_defaults(func=_host_fence_status)


AGGREGATE_COLUMNS = ('Id', 'UUID', 'Name', 'Availability Zone', 'Hosts',
                     'Properties')


def _aggregate_list(conf):
    """Every aggregate, its zone, hosts and other metadata, by id."""
    schema.check_migrated()
    aggregates = aggregate_obj.get_all(
        nf_context.get_operator_context())
    print(_table(AGGREGATE_COLUMNS,
                 [_aggregate_row(aggregate) for aggregate in aggregates]))


def _aggregate_row(aggregate):
    properties = sorted((key, value)
                        for key, value in aggregate.metadata.items()
                        if key != aggregate_obj.AZ_KEY)
    return (aggregate.id, aggregate.uuid, aggregate.name,
            aggregate.availability_zone, ', '.join(aggregate.hosts),
            ', '.join('%s=%s' % item for item in properties))


def _add_aggregate_parsers(subparsers):
    commands = subparsers.add_parser(
        'aggregate', help='Host aggregate commands, on the database.'
    ).add_subparsers(dest='aggregate_command', required=True)
    commands.add_parser(
        'list', help='List host aggregates with their availability zone, '
                     'hosts and other metadata.'
    ).set_defaults(func=_aggregate_list)


FLAVOR_COLUMNS = ('ID', 'Name', 'RAM', 'Disk', 'Ephemeral', 'VCPUs',
                  'Is Public')


def _flavor_list(conf):
    """Every flavor, public and private, in flavorid order."""
    schema.check_migrated()
    flavors = flavor_obj.get_all(
        nf_context.get_operator_context(), flavor_obj.Filters(is_public=None))
    print(_table(FLAVOR_COLUMNS, [
        (flavor.flavorid, flavor.name, flavor.memory_mb, flavor.root_gb,
         flavor.ephemeral_gb, flavor.vcpus, flavor.is_public)
        for flavor in flavors]))


def _flavor_create(conf):
    schema.check_migrated()
    args = conf.command
    flavor = flavor_obj.create(
        nf_context.get_operator_context(), args.flavor_name, args.ram,
        args.vcpus, args.disk, flavorid=args.flavor_id,
        is_public=not args.private)
    print('Flavor %s created with ID %s.' % (flavor.name, flavor.flavorid))


def _add_flavor_parsers(subparsers):
    commands = subparsers.add_parser(
        'flavor', help='Flavor commands, on the database.'
    ).add_subparsers(dest='flavor_command', required=True)
    commands.add_parser(
        'list', help='List every flavor, public and private.'
    ).set_defaults(func=_flavor_list)
    create = commands.add_parser('create', help='Create a flavor.')
    create.add_argument('flavor_name', metavar='NAME')
    create.add_argument('--ram', type=_positive, required=True,
                        help='Memory in MB.')
    create.add_argument('--vcpus', type=_positive, required=True,
                        help='Virtual CPUs.')
    create.add_argument('--disk', type=_non_negative, required=True,
                        help='Root disk in GB.')
    create.add_argument('--id', dest='flavor_id',
                        help='The flavor ID (default: a new UUID).')
    create.add_argument('--private', action='store_true',
                        help='Not public: only admins see it.')
    create.set_defaults(func=_flavor_create)


def _count(minimum, maximum=objects_base.MAX_INTEGER_ID):
    def parse(text):
        value = int(text)
        if not minimum <= value <= maximum:
            raise ValueError(text)
        return value
    parse.__name__ = ('integer >= %d' % minimum
                      if maximum == objects_base.MAX_INTEGER_ID
                      else 'integer from %d to %d' % (minimum, maximum))
    return parse


_positive = _count(1)
_non_negative = _count(0)


ZONE_COLUMNS = ('Zone', 'Zone Status', 'Host', 'Binary', 'Status', 'State',
                'Updated At')


def _availability_zone_list(conf):
    """Every zone and its enabled services, as the API's detail shows."""
    schema.check_migrated()
    servicegroup = servicegroup_api.API(conf)
    context = nf_context.get_operator_context()
    services = service_obj.ServiceList.get_records(context)
    listed = zones.ServiceZones.load(context, conf).availability_zones(
        services, servicegroup.liveness())
    print(_table(ZONE_COLUMNS,
                 [row for zone in listed for row in _zone_rows(zone)]))


def _zone_rows(zone):
    """One row per service of the zone's tree; one, empty, if none."""
    status = 'available' if zone.available else 'not available'
    rows = [(zone.name, status, host, entry.service.binary,
             service_status.status(entry.service),
             service_status.state(entry.is_up),
             objects_base.timestamp(entry.service.updated_at))
            for host, entries in (zone.hosts or {}).items()
            for entry in entries]
    return rows or [(zone.name, status, '', '', '', '', '')]


def _add_availability_zone_parsers(subparsers):
    commands = subparsers.add_parser(
        'availability_zone', help='Availability zone commands, on the '
                                  'database.'
    ).add_subparsers(dest='availability_zone_command', required=True)
    commands.add_parser(
        'list', help='List availability zones, available ones first, with '
                     'the enabled services of each and their state.'
    ).set_defaults(func=_availability_zone_list)


def _notifications_listen(conf):
    """Print notifications until Ctrl-C; the database is not used."""
    topics = (conf.command.topics or
              conf.notifications.versioned_notifications_topics)

    def ready(url):
        print('Listening to %s on %s (Ctrl-C to stop).'
              % (', '.join(topics), url), flush=True)

    # Ctrl-C and SIGTERM end the loop at its next poll: a
    # KeyboardInterrupt raised inside the AMQP client's read could be lost
    # there, and the command never end.
    stop = threading.Event()
    for signum in (signal.SIGINT, signal.SIGTERM):
        signal.signal(signum, lambda *_: stop.set())
    try:
        listener.listen(conf, topics, sys.stdout, stop=stop, ready=ready)
    except listener.ListenError as exc:
        raise exception.NovaForcedownException(str(exc))


def _add_notifications_parsers(subparsers):
    commands = subparsers.add_parser(
        'notifications', help='Notification commands, on the message bus.'
    ).add_subparsers(dest='notifications_command', required=True)
    listen = commands.add_parser(
        'listen', help='Print service notifications as they arrive, from a '
                       'private queue that takes nothing from other '
                       'consumers. Ctrl-C stops.')
    listen.add_argument('--topic', dest='topics', action='append',
                        metavar='TOPIC',
                        help='Topic to listen to; repeat for more (default: '
                             '[notifications] versioned_notifications_'
                             'topics).')
    listen.set_defaults(func=_notifications_listen)


def _add_parsers(subparsers):
    _add_db_parsers(subparsers)
    _add_service_parsers(subparsers)
    _add_host_parsers(subparsers)
    _add_aggregate_parsers(subparsers)
    _add_availability_zone_parsers(subparsers)
    _add_flavor_parsers(subparsers)
    _add_notifications_parsers(subparsers)


DESCRIPTION = ('Administer the database, services, hosts, aggregates, zones '
               'and flavors without the API.')
COMMAND_OPT = cfg.SubCommandOpt('command', title='Commands',
                                handler=_add_parsers)


def main(argv=None):
    try:
        conf = nf_conf.make_conf(
            argv, register_cli=[COMMAND_OPT], description=DESCRIPTION,
            usage='%(prog)s [--config-file PATH]... COMMAND ...',
            example='%(prog)s --config-file /etc/nova_forcedown/'
                    'nova_forcedown.conf service list')
    except cfg.Error as exc:
        print('nova-forcedown-manage: %s' % exc, file=sys.stderr)
        return 2
    logging.set_defaults(default_log_levels=logging.get_default_log_levels() +
                         ['alembic=WARN',
                          db_engine.QUIET_CONNECTION_RETRIES])
    logging.setup(conf, 'nova_forcedown')
    objects.register_all()
    try:
        db_engine.fail_at_once_at_start(conf)
        db_engine.configure(conf)
        notifications.configure(conf)
        code = conf.command.func(conf)
        notifications.flush()
    except exception.NovaForcedownException as exc:
        print('nova-forcedown-manage: %s' % exc, file=sys.stderr)
        return 1
    except (db_exc.DBError, sa_exc.SQLAlchemyError) as exc:
        print('nova-forcedown-manage: cannot use the database at %s: %s'
              % (nf_database.masked_connection(conf),
                 exception.first_line(exc)), file=sys.stderr)
        return 1
    return code or 0


if __name__ == '__main__':
    sys.exit(main())
