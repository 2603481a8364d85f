"""What idle agents cost the database: transactions a second, per agent.

``agents`` real agent processes (fake driver) of one host and one server
each, asked nothing, in each mode: looking for tasks every
``task_poll_interval`` (no transport URL) and told of them over RPC
(``--transport-url``), each with the ``db`` servicegroup driver and, when
``--tooz-url`` is given, the ``tooz`` one. Counted from PostgreSQL's own
statistics (``xact_commit`` and ``xact_rollback`` of the benchmark's
database, less this module's two reads) over ``seconds``, after a warm-up
long enough for the counters of the agents' start to be flushed.
PostgreSQL only: SQLite and MariaDB keep no such counter per database.
"""

import os
import time

import sqlalchemy as sa

from tools.benchmark import agents

# Seconds between the agents' registration and the first count: an idle
# backend's statistics reach pg_stat_database up to 10 s after its
# transactions, and the start's own writes must not be counted.
WARM_UP_SECONDS = 12

_TRANSACTIONS = sa.text(
    'SELECT xact_commit + xact_rollback FROM pg_stat_database '
    'WHERE datname = current_database()')


def modes(transport_url, tooz_url):
    """{label: {section: {option: value}}} of the modes measured."""
    tooz = {'DEFAULT': {'servicegroup_driver': 'tooz'},
            'coordination': {'backend_url': tooz_url}}
    rpc = {'DEFAULT': {'transport_url': transport_url}}
    found = {'polling, db driver': {}}
    if transport_url:
        found['rpc, db driver'] = rpc
    if tooz_url:
        found['polling, tooz driver'] = tooz
    if transport_url and tooz_url:
        both = {'DEFAULT': dict(tooz['DEFAULT'], **rpc['DEFAULT']),
                'coordination': tooz['coordination']}
        found['rpc, tooz driver'] = both
        # What the install guide suggests for a large cloud.
        found['rpc, tooz driver, 60 s intervals'] = {
            'DEFAULT': dict(both['DEFAULT'], task_reconcile_interval=60),
            'coordination': dict(both['coordination'],
                                 database_report_interval=60)}
    return found


def measure(api, engine, count, seconds, transport_url, tooz_url,
            broker=lambda: None):
    """{mode: figures} of ``count`` idle agents, or None off PostgreSQL.

    ``broker()``: what the message broker holds, read before the agents
    of an RPC mode start and while they run.
    """
    if engine.dialect.name != 'postgresql':
        return None
    return {label: _idle(api, engine, label, options, count, seconds,
                         broker if 'transport_url' in options.get(
                             'DEFAULT', {}) else lambda: None)
            for label, options in modes(transport_url, tooz_url).items()}


def _idle(api, engine, label, options, count, seconds, broker):
    tag = label.replace(', ', '-').replace(' ', '-')
    config = _write_config(api, tag, options)
    started = [agents.Agent(api, 'idle-%s-%d-' % (tag, index), 1, 1,
                            '--config-file', config)
               for index in range(count)]
    broker_before = broker()
    try:
        for agent in started:
            agent.start(engine)
        time.sleep(WARM_UP_SECONDS)
        before = _transactions(engine)
        time.sleep(seconds)
        after = _transactions(engine)
        broker_with_agents = broker()
    finally:
        for agent in started:
            agent.stop()
    # The first read's transaction is counted in the second.
    per_second = (after - before - 1) / seconds
    return {'agents': count, 'seconds': seconds,
            'transactions_per_s': round(per_second, 2),
            'per_agent_per_s': round(per_second / count, 3),
            'broker_before': broker_before,
            'broker_with_agents': broker_with_agents}


def _write_config(api, tag, options):
    path = os.path.join(os.path.dirname(api.config), 'idle-%s.conf' % tag)
    with open(path, 'w') as config:
        for section, values in options.items():
            config.write('[%s]\n' % section + ''.join(
                '%s = %s\n' % (name, str(value).replace('%', '%%'))
                for name, value in values.items()))
    return path


def _transactions(engine):
    with engine.connect() as connection:
        return connection.execute(_TRANSACTIONS).scalar()
