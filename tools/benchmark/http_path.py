"""What the HTTP path adds: each request over HTTP and in process, alternately.

The same paste application the API server runs (with the same statement
counting) is called in this process through webob, without a server or a
socket, on the same database; each iteration sends a request both ways,
so that both see the same machine load. The difference of the medians is
what HTTP adds: gunicorn's worker, waitress, the socket, the client.

One-row reads also get their floor, as the listings do: the row read with
one plain query and encoded with json.dumps, here in this process, timed
after each pair of requests. HTTP has its floor too: the same client
against a server that answers at once with canned bytes (canned_http),
the client and the loopback socket alone; what HTTP adds beyond it is the
API server's own.

Each request's *stack* is its time over HTTP less the time the server's
database driver spent running its statements (``X-Nova-Forcedown-SQL-Ms``):
what the server, the WSGI pipeline, the policy checks, the transaction's
own round trips (check-out, commit or rollback) and the view cost it.
"""

import contextlib
import statistics
import subprocess
import sys
import time

import sqlalchemy as sa
import webob

from nova_forcedown.api import deploy
from nova_forcedown import conf as nf_conf
from nova_forcedown.db import engine as db_engine
from nova_forcedown.db import models
from nova_forcedown.db import schema
from tools.benchmark import clients
from tools.benchmark import force_down
from tools.benchmark import latencies
from tools.benchmark import listings
from tools.benchmark import seeding
from tools.benchmark import server
from tools.benchmark import statements

FLAVOR_ID = '1'


def _reads(engine, host):
    """[(name, path, microversion, floor query or None)]."""
    instance = models.Instance.__table__
    flavor = models.Flavor.__table__
    with engine.connect() as connection:
        server = connection.execute(
            sa.select(instance.c.uuid).where(instance.c.host == host,
                                             instance.c.deleted == 0)
            .limit(1)).scalar_one()
    floors = listings.floor_queries(host)
    return [
        ('version document', '/', None, None),
        ('services ?host= 2.53', '/os-services?host=%s' % host, '2.53',
         floors['services_host']),
        ('flavor show 2.53', '/flavors/%s' % FLAVOR_ID, '2.53',
         sa.select(flavor).where(flavor.c.flavorid == FLAVOR_ID)),
        ('server show 2.100', '/servers/%s' % server, '2.100',
         floors['servers_detail'].where(instance.c.uuid == server)),
    ]


def _in_process_app(config_file):
    """The API's paste application, counting statements, in this process."""
    conf = nf_conf.make_conf(['--config-file', config_file])
    schema.prepare(conf)
    return statements.CountingMiddleware(deploy.load_app(conf),
                                         db_engine.get_engine())


def _in_process(app, method, path, version, body):
    headers, data = clients.request_parts(version, body)
    request = webob.Request.blank(path if path == '/' else '/v2.1' + path,
                                  method=method, headers=headers)
    if data is not None:
        request.body = data
    return request.get_response(app).status_int


def _timed(send):
    start = time.perf_counter()
    status = send()
    return time.perf_counter() - start, status


def _both_ways(app, client, pairs, floor=None):
    """(in-process times, HTTP times, HTTP stacks, failures, floor times).

    ``pairs``: (request sent in process, request sent over HTTP), each
    (method, path, microversion, body); after each pair, ``floor`` (when
    given) runs once, so that all three see the same moments.
    """
    inside, outside, stacks, failures, floors = [], [], [], [], []
    for mine, theirs in pairs:
        for times, send in (
                (inside, lambda: _in_process(app, *mine)),
                (outside, lambda: client.request(*theirs)[0])):
            elapsed, status = _timed(send)
            times.append(elapsed)
            if status not in (200, 300):
                failures.append(status)
        stacks.append(outside[-1] - client.sql_ms / 1000)
        if floor is not None:
            floors.append(_timed(floor)[0])
    return inside, outside, stacks, failures, floors


def _force_downs(uuids, hosts, version, iterations):
    """Pairs of force-downs (and force-ups) on different hosts each time.

    A host is forced down, then up again, so that every write changes
    its service and the cloud ends as it began.
    """
    pairs = []
    for step in range(iterations):
        first = 1 + (step * 22) % hosts
        for down in (True, False):
            pairs.append(tuple(
                _with_version(force_down.request(uuids, version, index,
                                                 down), version)
                for index in (first, 1 + first % hosts)))
    return pairs


def _with_version(request, version):
    method, path, body = request
    return method, path, version, body


def client_alone(iterations):
    """Median seconds of a one-row read's request answered at once."""
    canned = subprocess.Popen(
        [sys.executable, '-m', 'tools.benchmark.canned_http'],
        cwd=server.CHECKOUT, stdout=subprocess.PIPE)
    try:
        client = clients.Client(int(canned.stdout.readline()))
        try:
            times = [_timed(lambda: client.request(
                'GET', '/os-services?host=x', '2.53')[0])[0]
                for _ in range(iterations)]
        finally:
            client.close()
    finally:
        canned.kill()
        canned.wait()
        canned.stdout.close()
    return statistics.median(times)


def _figures(inside, outside, stacks, failures, floor, client_floor):
    figures = {
        'in_process_ms': latencies.ms(statistics.median(inside)),
        'http_ms': latencies.ms(statistics.median(outside)),
        'stack_ms': latencies.ms(statistics.median(stacks)),
        'failures': len(failures),
    }
    figures['http_adds_ms'] = round(
        figures['http_ms'] - figures['in_process_ms'], 2)
    figures['server_adds_ms'] = round(
        figures['http_adds_ms'] - latencies.ms(client_floor), 2)
    if floor:
        figures['floor_ms'] = latencies.ms(statistics.median(floor))
        figures['http_over_floor_ms'] = round(
            figures['http_ms'] - figures['floor_ms'], 2)
    return figures


def measure(api, engine, uuids, hosts, iterations):
    """Each request's in-process and HTTP medians, and their difference."""
    app = _in_process_app(api.config)
    client_floor = client_alone(iterations)
    client = clients.Client(api.port)
    results = {'client alone': {'http_ms': latencies.ms(client_floor)}}
    try:
        for name, path, version, floor_query in _reads(
                engine, seeding.host_name(5)):
            request = ('GET', path, version, None)
            pairs = [(request, request)] * iterations
            _both_ways(app, client, pairs[:5])
            with _floor(engine, floor_query) as floor:
                results[name] = _figures(
                    *_both_ways(app, client, pairs, floor), client_floor)
        for version in ('2.11', '2.53'):
            results['force-down %s' % version] = _figures(*_both_ways(
                app, client, _force_downs(uuids, hosts, version,
                                          iterations)), client_floor)
    finally:
        client.close()
    return results


@contextlib.contextmanager
def _floor(engine, query):
    """listings.floor_of ``query``, or None when there is none."""
    if query is None:
        yield None
        return
    with listings.floor_of(engine, query) as floor:
        yield floor
