"""From a host's death to its servers running elsewhere, with the monitor.

    python -m tools.benchmark.monitor_recovery [--runs 20] [--servers 100]
        [--spares 4] [--driver db|tooz] [--db-url URL] [--max-in-flight N]

Each run builds a cloud of its own (tests/fixtures/monitored_hosts.py): one
host with ``--servers`` servers and ``--spares`` empty hosts, each with a
simulated BMC speaking IPMI, their agents and one monitor, on a fresh
database (SQLite, or one made on the server ``--db-url`` names) with the
``db`` or ``tooz`` servicegroup driver (Redis on 127.0.0.1:6379; the
monitor then reads the agents' memberships as the hosts' pulses). The
monitor acts through the cloud's API, as it would on any Nova. The host
is switched off through its BMC with ipmitool; the database is then read
every 20 ms for two moments after the power-off: the host forced down,
and every one of its servers active (rebuilt) on another host. Prints the
median and p99 of both over the runs, and each run's figures, with when
the monitor's log says it judged the host failed (where the time to the
force-down goes: seeing the failure, or fencing and forcing down).

The failure is seen within the driver's window, so the liveness settings
are printed with the figures: ``report_interval`` 1 s, ``service_down_time``
(``--down-time``, 3 s by default), ``[monitor] interval`` 0.5 s.
"""

import argparse
import datetime
import json
import re
import statistics
import sys
import time
import uuid

import sqlalchemy as sa

from tests.fixtures import monitored_hosts
from tools.benchmark import latencies
from tools.benchmark import seeding

POLL = 0.02
DEAD = 'dead-1'
# oslo.log's default line: its local time, to the millisecond.
_JUDGED = re.compile(r'^(\S+ \S+) .*Host %s has failed: .*\(judged in '
                     r'([0-9.]+) s\)' % DEAD, re.M)

_FORCED_DOWN = sa.text('SELECT forced_down FROM services '
                       'WHERE host = :host AND deleted = 0')
# The dead host's servers, rebuilt on another host.
_ACTIVE_ELSEWHERE = sa.text(
    "SELECT count(*) FROM instances WHERE host <> :host AND "
    "vm_state = 'active' AND task_state IS NULL AND hostname LIKE :names "
    "AND deleted = 0")


def _arguments(argv):
    parser = argparse.ArgumentParser(prog='monitor_recovery')
    parser.add_argument('--runs', type=int, default=20)
    parser.add_argument('--servers', type=int, default=100)
    parser.add_argument('--spares', type=int, default=4)
    parser.add_argument('--driver', choices=('db', 'tooz'), default='db')
    parser.add_argument('--db-url', help='A server to make each run\'s '
                        'database on (default: SQLite).')
    parser.add_argument('--down-time', type=int, default=3,
                        help='[DEFAULT] service_down_time, seconds.')
    parser.add_argument('--max-in-flight', type=int, default=100)
    parser.add_argument('--json', help='Write the figures to this file.')
    return parser.parse_args(argv)


def _config(args):
    liveness = '[DEFAULT]\nservice_down_time = %d\n' % args.down_time
    if args.driver == 'tooz':
        # The agents' memberships are the hosts' pulses, which the
        # monitor reads too.
        liveness += ('servicegroup_driver = tooz\n[monitor]\npulse = true\n'
                     '[coordination]\n'
                     'backend_url = redis://127.0.0.1:6379?namespace=bench-%s'
                     '\ndatabase_report_interval = 2\n' % uuid.uuid4().hex)
    return liveness


def one_run(args):
    """Seconds to forced down, all active, judged failed, the judgement."""
    database = seeding.Database(args.db_url)
    cloud = monitored_hosts.MonitoredHosts(
        {'dead': (1, args.servers), 'spare': (args.spares, 0)},
        monitor_options='max_in_flight = %d' % args.max_in_flight,
        more_config=_config(args), database_url=database.url_text)
    try:
        cloud.setUp()
        monitor = cloud.start_monitor()
        monitored_hosts.wait_for_log(monitor, 'Leading')
        engine = sa.create_engine(database.url, poolclass=sa.pool.NullPool)
        try:
            forced_down, all_active, powered_off = _timed_recovery(
                cloud, engine, args.servers)
            return (forced_down, all_active) + _judged_after(
                monitor.output(), powered_off)
        finally:
            engine.dispose()
    finally:
        cloud.cleanUp()
        database.drop()


def _timed_recovery(cloud, engine, servers):
    """Seconds to forced down, to all active; the power-off's wall time."""
    result = cloud.ipmitool(DEAD, 'chassis', 'power', 'off')
    if result.returncode:
        raise SystemExit('ipmitool: %s' % result.stderr)
    started, powered_off = time.monotonic(), time.time()
    forced_down = None
    deadline = started + 120
    while time.monotonic() < deadline:
        with engine.connect() as connection:
            if forced_down is None and connection.execute(
                    _FORCED_DOWN, {'host': DEAD}).scalar():
                forced_down = time.monotonic() - started
            active = connection.execute(
                _ACTIVE_ELSEWHERE,
                {'host': DEAD, 'names': DEAD + '-server-%'}).scalar()
        if forced_down is not None and active == servers:
            return forced_down, time.monotonic() - started, powered_off
        time.sleep(POLL)
    raise SystemExit('not recovered within 120 s: forced down after %s s'
                     % forced_down)


def _judged_after(log, powered_off):
    """Seconds to the monitor's "has failed" line; its judgement's.

    The judgement is the BMC's answer and the probe.
    """
    line = _JUDGED.search(log)
    if line is None:
        return float('nan'), float('nan')
    judged = datetime.datetime.strptime(line.group(1),
                                        '%Y-%m-%d %H:%M:%S.%f')
    return judged.timestamp() - powered_off, float(line.group(2))


def _summary(values):
    return {'median': round(statistics.median(values), 2),
            'p99': round(latencies.percentile(values, 0.99), 2),
            'max': round(max(values), 2)}


def main(argv=None):
    args = _arguments(sys.argv[1:] if argv is None else argv)
    runs = []
    for number in range(1, args.runs + 1):
        runs.append(one_run(args))
        print('run %d: judged failed after %.2f s (judged in %.2f s), '
              'forced down after %.2f s, all %d servers active after %.2f '
              's' % (number, runs[-1][2], runs[-1][3], runs[-1][0],
                     args.servers, runs[-1][1]), flush=True)
    figures = {
        'driver': args.driver,
        'database': (args.db_url or 'sqlite').split(':')[0],
        'servers': args.servers, 'spares': args.spares,
        'service_down_time': args.down_time, 'report_interval': 1,
        'monitor_interval': 0.5, 'max_in_flight': args.max_in_flight,
        'judged_failed_s': _summary([run[2] for run in runs]),
        'judgement_s': _summary([run[3] for run in runs]),
        'forced_down_s': _summary([run[0] for run in runs]),
        'all_active_s': _summary([run[1] for run in runs]),
        'runs': len(runs)}
    print(json.dumps(figures, indent=2))
    if args.json:
        with open(args.json, 'w') as output:
            json.dump(figures, output, indent=2)
    return 0


if __name__ == '__main__':
    sys.exit(main())
