"""The table printed at the end of a run, and the machine it ran on.

The table has one column per host count. Each measurement prints its own
section: a function of (write, line, runs) that prints its rows, where
``line(label, cells)`` writes one row with one cell per host count.
"""

import functools
import os
import platform
import sys

import psutil

from tools.benchmark import listings as listings_module

LABEL_WIDTH = 38
CELL_WIDTH = 34


def machine():
    model = 'unknown'
    with open('/proc/cpuinfo') as cpuinfo:
        for line in cpuinfo:
            if line.startswith('model name'):
                model = line.split(':', 1)[1].strip()
                break
    return {'nproc': os.cpu_count(), 'cpu_model': model,
            'memory_mb': psutil.virtual_memory().total // 2 ** 20,
            'python': platform.python_version(),
            'kernel': platform.release()}


def print_table(report, out=sys.stdout):
    runs = report['runs']
    line = functools.partial(_line, out)
    out.write('\nnova-forcedown benchmark: %s, %d API workers x %d threads, '
              '%s CPUs (%s), %s MB\n' % (
                  report['backend'], report['workers'], report['threads'],
                  report['machine']['nproc'], report['machine']['cpu_model'],
                  report['machine']['memory_mb']))
    if runs:
        line('hosts', ['%d' % run['hosts'] for run in runs])
        for section in SECTIONS:
            section(out.write, line, runs)
        line('seconds for this host count', ['%s' % run['seconds']
                                             for run in runs])
    if report.get('tooz'):
        tooz_liveness(out.write, report['tooz'], report['backend'])
    if report.get('rpc'):
        tasks_told(out.write, report['rpc'])
    if report.get('builds'):
        server_builds(out.write, report['builds'])


def _line(out, label, cells):
    out.write(label.ljust(LABEL_WIDTH) +
              ''.join(cell.rjust(CELL_WIDTH) for cell in cells) + '\n')


def short(value):
    """Milliseconds to print: one decimal under 100, none from 100 on."""
    if value is None:
        return '-'
    return ('%.1f' % value) if value < 100 else ('%.0f' % value)


def listings(write, line, runs):
    write('listings: rows  median/p95 ms  [floor median ms, '
          'x floor]  {SQL statements}\n')
    for name in runs[0]['listings']:
        line(name, ['%d  %s/%s [%s, x%.1f] {%s}' % (
            item['rows'], short(item['median_ms']), short(item['p95_ms']),
            short(item['floor_median_ms']), item['ratio_to_floor'],
            item['statements'])
            for item in (run['listings'][name] for run in runs)])


def force_down(write, line, runs):
    write('force-down: median/p99 ms  rate/s  failures  {SQL statements}\n')
    for name in runs[0]['force_down']:
        line(name, ['%s/%s%s f=%d {%s}' % (
            short(item['median_ms']), short(item['p99_ms']),
            ' %s/s' % item['per_second'] if 'per_second' in item else '',
            item['failures'], ','.join(map(str, item['statements'])))
            for item in (run['force_down'][name] for run in runs)])


def http_path(write, line, runs):
    """Skipped when the run has none (--http-path 0)."""
    if not runs[0].get('http_path'):
        return
    write('the HTTP path: median ms in process / over HTTP, +what HTTP '
          'adds (of it, the server), stack (HTTP - SQL)  [floor, HTTP - '
          'floor]; "client alone": the client against canned answers\n')
    for name in runs[0]['http_path']:
        line(name, [_http_path_cell(run['http_path'][name])
                    for run in runs])


def _http_path_cell(item):
    if 'in_process_ms' not in item:
        return '-/%.2f' % item['http_ms']
    cell = '%.2f/%.2f +%.2f (%.2f) s%.2f' % (
        item['in_process_ms'], item['http_ms'], item['http_adds_ms'],
        item['server_adds_ms'], item['stack_ms'])
    if 'floor_ms' in item:
        cell += ' [%.2f, +%.2f]' % (item['floor_ms'],
                                    item['http_over_floor_ms'])
    if item['failures']:
        cell += ' f=%d' % item['failures']
    return cell


def slow_clients(write, line, runs):
    """Only the first host count has this run."""
    slow = runs[0].get('slow_clients')
    if not slow:
        return
    write('slow clients at %d hosts, 8 clients listing and forcing down for '
          '%.0f s:\n' % (runs[0]['hosts'], slow['with']['seconds']))
    for label in ('without', 'with'):
        item = slow[label]
        write('  %3d slow connections: %d requests, %d failures, '
              'median/p99 %s/%s ms, %s/s, %d closed by the server\n'
              % (item['slow_connections'], item['requests'],
                 item['failures'], short(item['median_ms']),
                 short(item['p99_ms']), item['per_second'],
                 item['reopened_by_server_close']))
    write('  p99 with / without: x%.2f\n' % slow['p99_ratio'])


def actions(write, line, runs):
    """Only the first host count has this run."""
    figures = runs[0].get('actions')
    if not figures:
        return
    write('stop and start, %d servers on hosts of one agent '
          '(client polls every 50 ms):\n' % figures['agent_hosts'])
    for name, item in figures['runs'].items():
        write('  %s: %d done, %d failures, median/p99 %s/%s ms\n' % (
            name, item['requests'], item['failures'],
            short(item['median_ms']), short(item['p99_ms'])))


def evacuations(write, line, runs):
    """Only the first host count has this run."""
    figures = runs[0].get('evacuations')
    if not figures:
        return
    write('evacuation, 8 clients, one request per server at 2.53:\n')
    for name, item in figures.items():
        write('  %s: all accepted in %.2f s (median/p99 %s/%s ms, %d '
              'failures; API CPU %.2f s), all active on a destination in '
              '%s s; lost %d, hosts overcommitted %d\n' % (
                  name, item['accepted_s'], short(item['median_ms']),
                  short(item['p99_ms']), item['failures'],
                  item.get('api_cpu_s', 0),
                  item['active_on_destination_s'], item['lost'],
                  item['overcommitted_hosts']))


def host_wide(write, line, runs):
    """Only the first host count has this run."""
    figures = runs[0].get('host_wide')
    if not figures:
        return
    write('host-wide operations, each changing %d servers of a forced-down '
          'host:\n' % figures['servers'])
    for name, item in figures['runs'].items():
        write('  %s: %d requests, %d failures, median/p99 %s/%s ms {%s}\n'
              % (name, item['requests'], item['failures'],
                 short(item['median_ms']), short(item['p99_ms']),
                 ','.join(map(str, item['statements']))))
    write('  servers not shut down after the runs: %d\n'
          % figures['left_running'])


def heartbeats(write, line, runs):
    line('heartbeats report_state/s (fail)', ['%s (%d)' % (
        run['heartbeats']['per_second'], run['heartbeats']['failures'])
        for run in runs])
    line('  batched, %d hosts per call' % runs[0]['heartbeats_batched'][
        'batch'], ['%s (%d)' % (run['heartbeats_batched']['per_second'],
                                run['heartbeats_batched']['failures'])
                   for run in runs])


def rss(write, line, runs):
    line('API peak RSS MB: sum (largest proc)', ['%.0f (%.0f)' % (
        run['rss']['peak_sum_mb'], run['rss']['peak_process_mb'])
        for run in runs])
    line('  server of max_limit=%d' % listings_module.UNPAGED_MAX_LIMIT, [
        '%.0f (%.0f)' % (run['rss_unpaged']['peak_sum_mb'],
                         run['rss_unpaged']['peak_process_mb'])
        for run in runs])


# In the order they are printed.
SECTIONS = (listings, force_down, http_path, slow_clients, actions,
            evacuations, host_wide, heartbeats, rss)


def tooz_liveness(write, figures, backend):
    """The run of --tooz-hosts, on its own: not a column of the table."""
    tooz, database = figures['tooz'], figures['database']
    write('\nliveness on the tooz driver: %d hosts every %d s (%d '
          'agents, one connection each, in %d processes), %.0f s measured '
          'after %.0f s of start-up; load average %s -> %s, max %s\n' % (
              figures['hosts'], figures['report_interval'],
              figures['agents'], figures['processes'], figures['seconds'],
              figures['warm_up_s'],
              '/'.join(map(str, figures['load_average_before'])),
              '/'.join(map(str, figures['load_average_after'])),
              round(figures['load_1min_max'] or 0, 2)))
    write('  backend heartbeats: %s/s of %s/s needed, %d failed, latest '
          '%.1f s late (%.1f s at the start)\n' % (
              tooz['per_second'], tooz['target_per_second'],
              tooz['failures'], tooz['late_max_s'],
              tooz['late_at_start_s']))
    if figures.get('redis_calls_per_second'):
        write('  Redis calls/s (all its clients): %s\n' % ', '.join(
            '%s %s' % item
            for item in figures['redis_calls_per_second'].items()))
    write('  database heartbeats: %s/s, %d failed\n'
          % (database['per_second'], database['failures']))
    write('  %d listings: %d false downs (in %d listings; backend alone: '
          'at most %s hosts missing); forced down by the run: %d of %d '
          'down in the next listing, %d later seen up; %d failures\n' % (
              figures['checks'], figures['false_downs'],
              figures['listings_with_false_downs'],
              figures['backend_misses_max'],
              figures['forced_down_at_once'], figures['forced_by_run'],
              figures['forced_seen_up_later'], figures['failures']))
    if figures.get('backend_read_timeouts'):
        write('  the backend\'s list of members took over 5 s %d times\n'
              % figures['backend_read_timeouts'])
    for version, item in figures['listings'].items():
        write('  services listing %s, %d hosts: median/p99 %s/%s ms (%d '
              'requests)\n' % (version, figures['hosts'],
                               short(item['median_ms']),
                               short(item['p99_ms']), item['requests']))
    if figures.get('tasks'):
        tasks = figures['tasks']
        write('  meanwhile, a stop or start every %s s on an agent of %d '
              'hosts:\n' % (tasks['interval_s'], tasks['agent_hosts']))
        for name in ('request to result seen', 'recorded to done'):
            item = tasks[name]
            write('    %s: median/p99 %s/%s ms (%d, %d failures)\n' % (
                name, short(item['median_ms']), short(item['p99_ms']),
                item['requests'], item['failures']))
    quiet = figures['after_the_agents']
    write('  once the agents stopped (their members alive for %d s more): '
          '%d false downs in %d listings\n' % (
              figures['service_down_time'], quiet['false_downs'],
              quiet['checks']))
    for version, item in quiet['listings'].items():
        write('    services listing %s: median/p99 %s/%s ms (%d requests)\n'
              % (version, short(item['median_ms']), short(item['p99_ms']),
                 item['requests']))
    write('  API peak RSS MB: sum %.0f (largest proc %.0f)\n' % (
        figures['api_rss']['peak_sum_mb'],
        figures['api_rss']['peak_process_mb']))
    write('  heartbeats per CPU second, one per host and heartbeat '
          '(senders; with the server):\n')
    one = figures['db_one_per_call']
    write('    db (report_state, %s): %s/s, %s (%s)\n' % (
        backend, one['per_second'], one['per_agent_cpu_second'],
        one['per_cpu_second'] if one['server_cpu_s'] is not None
        else 'server in-process'))
    write('    tooz (redis heartbeat): %s/s, %s (%s)\n' % (
        tooz['per_second'], tooz['per_agent_cpu_second'],
        tooz['per_cpu_second']))


def tasks_told(write, figures):
    """The run of --rpc-transport-url: each mode, side by side."""
    write('\ntasks looked for (polling) and cast (rpc):\n')
    for mode in ('polling', 'rpc'):
        found = figures.get(mode)
        if not found or 'actions' not in found:
            continue
        if found['actions'].get('broker'):
            broker = found['actions']['broker']
            write('  %s: %d hosts, one RPC server each (%d threads, %s MB '
                  'in their %d processes); broker: %d queues, %d '
                  'connections, %s MB\n' % (
                      mode, found['actions']['agent_hosts'],
                      found['actions']['listeners_threads'],
                      found['actions']['listeners_rss_mb'],
                      found['actions']['agent_processes'],
                      broker['queues'], broker['connections'],
                      broker['memory_mb']))
        for name, item in found['actions']['runs'].items():
            write('  %s, stop and start, %s: median/p99 %s/%s ms (%d, %d '
                  'failures)\n' % (mode, name, short(item['median_ms']),
                                   short(item['p99_ms']), item['requests'],
                                   item['failures']))
        item = found.get('evacuation')
        if item is None:
            continue
        write('  %s, evacuation of %d servers: all accepted in %.2f s, all '
              'active in %s s; lost %d\n' % (
                  mode, item['servers'], item['accepted_s'],
                  item['active_on_destination_s'], item['lost']))
    for mode, item in (figures.get('idle') or {}).items():
        write('  idle agents, %s: %s transactions/s per agent (%d agents, '
              '%.0f s)\n' % (mode, item['per_agent_per_s'], item['agents'],
                             item['seconds']))
        before, during = item['broker_before'], item['broker_with_agents']
        if before and during:
            write('    broker: queues %d -> %d, connections %d -> %d, '
                  'memory %s -> %s MB\n' % (
                      before['queues'], during['queues'],
                      before['connections'], during['connections'],
                      before['memory_mb'], during['memory_mb']))


def server_builds(write, figures):
    """The run of --build-hosts: each mode, one after the other."""
    for mode, found in figures.items():
        write('\nservers created and deleted, %s mode, %s, one agent of %d '
              'hosts (%d of them disabled or forced down):\n' % (
                  mode, found['backend'], found['agent_hosts'],
                  found['unhealthy_hosts']))
        for name, item in found['one at a time'].items():
            write('  one at a time, %s: median/p99 %s/%s ms (%d, %d '
                  'failures)\n' % (
                      name, short(item['median_ms']), short(item['p99_ms']),
                      item['requests'], item['failures']))
        eight = found['8 clients']
        create, delete = eight['create'], eight['delete']
        write('  8 clients, %d creates: %s/s accepted, all in %.2f s '
              '(median/p99 %s/%s ms, %d failures) {%s}; all ACTIVE in %s s '
              '(%s/s), %d not ACTIVE, at most %d on one node\n' % (
                  create['servers'], create['per_second'],
                  create['accepted_s'], short(create['median_ms']),
                  short(create['p99_ms']), create['failures'],
                  ','.join(map(str, create['statements'])),
                  create['all_active_s'], create['active_per_second'],
                  create['not_active'], create['most_on_one_node']))
        database = create['database_cpu_s']
        write('    CPU seconds until all ACTIVE: API %s, agent %s, '
              'database %s\n' % (
                  create['api_cpu_s'], create['agent_cpu_s'],
                  '-' if database is None else database))
        write('  8 clients, deletes: %s/s accepted, all in %.2f s '
              '(median/p99 %s/%s ms, %d failures); all gone in %s s\n' % (
                  delete['per_second'], delete['accepted_s'],
                  short(delete['median_ms']), short(delete['p99_ms']),
                  delete['failures'], delete['all_gone_s']))
        for name in ('create, recorded to done', 'delete, recorded to done'):
            item = eight[name]
            write('  8 clients, %s: median/p99 %s/%s ms (%d)\n' % (
                name, short(item['median_ms']), short(item['p99_ms']),
                item['requests']))
        checks = found['checks']
        write('  checks: %d servers on the %d hosts not up and enabled; '
              '%d nodes overcommitted\n' % (
                  checks['servers placed on them'],
                  checks['hosts not up and enabled'],
                  checks['overcommitted nodes']))
