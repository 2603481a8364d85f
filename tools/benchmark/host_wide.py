"""Host-wide operations on a forced-down host of many servers.

The seeded cloud's host 50 is forced down; ``servers`` servers are put on
it, then ``mark_shutdown`` and ``os-resetState`` are timed over HTTP, each
round changing every server: the servers' power state is set back to
running (in the database, between two timed requests) before each mark,
and the reset alternates error and active.
"""

import datetime
import json
import uuid

import sqlalchemy as sa

from nova_forcedown.db import models
from tools.benchmark import clients
from tools.benchmark import latencies
from tools.benchmark import seeding

# The first host the seeded cloud forces down (every 50th is).
HOST_INDEX = 50

_INSTANCES = models.Instance.__table__
_FLAVOR = json.dumps({'flavorid': '1', 'name': 'm1.tiny', 'memory_mb': 512,
                      'vcpus': 1, 'root_gb': 1, 'ephemeral_gb': 0,
                      'swap': 0, 'extra_specs': {}})


def _seed_servers(engine, host, count):
    now = datetime.datetime.utcnow().replace(microsecond=0)
    rows = [dict(uuid=str(uuid.uuid4()), display_name='hw-%d' % number,
                 host=host, node=host, vm_state='active', power_state=1,
                 project_id='bench', user_id='bench', flavor=_FLAVOR,
                 created_at=now, launched_at=now, deleted=0)
            for number in range(count)]
    with engine.begin() as connection:
        for start in range(0, len(rows), 2000):
            connection.execute(_INSTANCES.insert(), rows[start:start + 2000])


def _power_on_again(engine, host):
    with engine.begin() as connection:
        connection.execute(_INSTANCES.update().where(
            _INSTANCES.c.host == host).values(power_state=1))


def _timed(client, host, body, rounds, before=None):
    times, failures, statements = [], [], set()
    for number in range(rounds):
        if before is not None:
            before()
        statements.add(clients.timed_request(
            client, ('POST', '/os-host-servers/%s/action' % host, '2.1',
                     body(number)), times, failures))
    return latencies.summary(times, failures, statements, elapsed=None)


def measure(port, engine, servers, rounds):
    """Latencies of each operation changing ``servers`` servers."""
    host = seeding.host_name(HOST_INDEX)
    _seed_servers(engine, host, servers)
    client = clients.Client(port)
    try:
        figures = {
            'mark_shutdown': _timed(
                client, host, lambda number: {'mark_shutdown': None},
                rounds, before=lambda: _power_on_again(engine, host)),
            'os-resetState': _timed(
                client, host, lambda number: {'os-resetState': {
                    'state': ('error', 'active')[number % 2]}}, rounds),
        }
    finally:
        client.close()
    with engine.connect() as connection:
        left_running = connection.execute(
            sa.select(sa.func.count()).select_from(_INSTANCES).where(
                _INSTANCES.c.host == host,
                _INSTANCES.c.power_state != 4)).scalar()
    return {'servers': servers, 'runs': figures,
            'left_running': left_running}
