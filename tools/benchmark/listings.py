"""Listings of services, hypervisors and servers, each beside its floor.

The floor of a listing is the least any service could do for it: the same
rows read with one plain SQL query on a DB-API cursor, turned into dicts
and encoded with json.dumps, in this process, without HTTP.
"""

import contextlib
import functools
import json
import statistics

import sqlalchemy as sa

from nova_forcedown.db import models
from tools.benchmark import clients
from tools.benchmark import latencies
from tools.benchmark import seeding

LISTINGS = [
    # name, path, microversion, floor query
    ('services 2.1', '/os-services', '2.1', 'services'),
    ('services 2.53', '/os-services', '2.53', 'services'),
    ('services 2.88', '/os-services', '2.88', 'services'),
    ('services ?host= 2.53', '/os-services?host=%(host)s', '2.53',
     'services_host'),
    ('hypervisors 2.1', '/os-hypervisors', '2.1', 'summary'),
    ('hypervisors 2.53', '/os-hypervisors', '2.53', 'summary'),
    ('hypervisors 2.88', '/os-hypervisors', '2.88', 'summary'),
    ('detail 2.1', '/os-hypervisors/detail', '2.1', 'detail'),
    ('detail 2.53', '/os-hypervisors/detail', '2.53', 'detail'),
    ('detail 2.88', '/os-hypervisors/detail', '2.88', 'detail'),
    ('detail 2.53 limit=1000', '/os-hypervisors/detail?limit=1000', '2.53',
     'detail_page'),
    ('aggregates 2.41', '/os-aggregates', '2.41', 'aggregates'),
    ('zones detail 2.1', '/os-availability-zone/detail', '2.1', 'zones'),
    # The busy host's servers, at the first microversion with host_status
    # and at the latest (up to which `openstack server list` goes).
    ('servers detail ?host= 2.16',
     '/servers/detail?all_tenants=1&host=%(host)s', '2.16', 'servers_host'),
    ('servers detail ?host= 2.100',
     '/servers/detail?all_tenants=1&host=%(host)s', '2.100',
     'servers_host'),
    # Pages of [api] max_limit (1000) servers, as Nova sends them.
    ('servers 2.100', '/servers?all_tenants=1', '2.100', 'servers_brief'),
    ('servers detail 2.100', '/servers/detail?all_tenants=1', '2.100',
     'servers_detail'),
]

# Listed by a second API server whose [api] max_limit is UNPAGED_MAX_LIMIT,
# so that one request returns every server, as Nova does for a cloud that
# raised max_limit: the first server keeps Nova's pages of 1000.
UNPAGED_MAX_LIMIT = 20000
UNPAGED_LISTINGS = [
    ('servers 2.100 limit=10000', '/servers?all_tenants=1&limit=10000',
     '2.100', 'servers_brief'),
    ('servers detail 2.100 limit=10000',
     '/servers/detail?all_tenants=1&limit=10000', '2.100',
     'servers_detail'),
]

# Floors whose rows are not the listing's items, read whole: an aggregate
# holds a share of the hosts, a zone lists its hosts' services.
_WHOLE_FLOORS = ('aggregates', 'zones')

_SERVICE_COLUMNS = ('id', 'uuid', 'binary', 'host', 'topic', 'disabled',
                    'disabled_reason', 'last_seen_up', 'forced_down',
                    'updated_at')
_NODE_SUMMARY_COLUMNS = ('id', 'uuid', 'hypervisor_hostname')
_NODE_DETAIL_COLUMNS = _NODE_SUMMARY_COLUMNS + (
    'hypervisor_type', 'hypervisor_version', 'host_ip', 'host', 'vcpus',
    'memory_mb', 'local_gb', 'vcpus_used', 'memory_mb_used', 'local_gb_used',
    'free_ram_mb', 'free_disk_gb', 'current_workload', 'running_vms',
    'disk_available_least', 'cpu_info', 'stats')
# What a server's detail view shows, its JSON columns as text.
_INSTANCE_DETAIL_COLUMNS = (
    'id', 'uuid', 'display_name', 'host', 'node', 'vm_state', 'power_state',
    'task_state', 'project_id', 'user_id', 'display_description', 'flavor',
    'image_ref', 'hostname', 'key_name', 'launched_at', 'terminated_at',
    'availability_zone', 'locked_by', 'locked_reason', 'progress',
    'access_ip_v4', 'access_ip_v6', 'config_drive', 'user_metadata',
    'created_at', 'updated_at', 'deleted')


def _with_zone(service):
    """Services joined with the zone of their host's aggregate, if any.

    The seeded hosts are in one aggregate each, so a plain join gives each
    service one row.
    """
    member = models.AggregateHost.__table__
    zone = models.AggregateMetadata.__table__
    return service.outerjoin(member, member.c.host == service.c.host) \
        .outerjoin(zone, sa.and_(zone.c.aggregate_id == member.c.aggregate_id,
                                 zone.c.key == 'availability_zone'))


def _servers_floors(host):
    """Live servers, newest first: details, brief, one host's details.

    Details come with their host's compute service status and zone.
    """
    instance = models.Instance.__table__
    service = models.Service.__table__
    member = models.AggregateHost.__table__
    zone = models.AggregateMetadata.__table__
    joined = instance.outerjoin(service, sa.and_(
        service.c.host == instance.c.host, service.c.deleted == 0,
        service.c.binary == 'nova-compute')) \
        .outerjoin(member, member.c.host == instance.c.host) \
        .outerjoin(zone, sa.and_(zone.c.aggregate_id == member.c.aggregate_id,
                                 zone.c.key == 'availability_zone'))
    order = (instance.c.created_at.desc(), instance.c.id.desc())
    detail = (sa.select(*[instance.c[name]
                          for name in _INSTANCE_DETAIL_COLUMNS],
                        service.c.disabled, service.c.forced_down,
                        service.c.last_seen_up, zone.c.value)
              .select_from(joined).where(instance.c.deleted == 0)
              .order_by(*order))
    brief = (sa.select(instance.c.uuid, instance.c.display_name)
             .where(instance.c.deleted == 0).order_by(*order))
    return {'servers_detail': detail, 'servers_brief': brief,
            'servers_host': detail.where(instance.c.host == host)}


def floor_queries(host):
    """Plain SELECTs returning the rows each listing returns."""
    service = models.Service.__table__
    node = models.ComputeNode.__table__
    services = (sa.select(*[service.c[name] for name in _SERVICE_COLUMNS],
                          models.AggregateMetadata.__table__.c.value)
                .select_from(_with_zone(service))
                .where(service.c.deleted == 0,
                       service.c.binary.not_in(seeding.HIDDEN_BINARIES))
                .order_by(service.c.id))
    join = node.join(service, sa.and_(
        service.c.id == node.c.service_id, service.c.deleted == 0,
        service.c.binary == 'nova-compute'))
    status = (service.c.id.label('service_id'),
              service.c.uuid.label('service_uuid'), service.c.disabled,
              service.c.disabled_reason, service.c.forced_down,
              service.c.last_seen_up)

    def nodes(columns):
        return (sa.select(*[node.c[name] for name in columns], *status)
                .select_from(join).where(node.c.deleted == 0)
                .order_by(node.c.id))

    aggregate = models.Aggregate.__table__
    member = models.AggregateHost.__table__
    aggregates = (sa.select(aggregate.c.id, aggregate.c.uuid,
                            aggregate.c.name, aggregate.c.created_at,
                            aggregate.c.updated_at, member.c.host)
                  .select_from(aggregate.outerjoin(
                      member, member.c.aggregate_id == aggregate.c.id))
                  .order_by(aggregate.c.id))
    return {
        'aggregates': aggregates,
        'zones': services,
        'services': services,
        'services_host': services.where(service.c.host == host),
        'summary': nodes(_NODE_SUMMARY_COLUMNS),
        'detail': nodes(_NODE_DETAIL_COLUMNS),
        'detail_page': nodes(_NODE_DETAIL_COLUMNS),
        **_servers_floors(host),
    }


@contextlib.contextmanager
def floor_of(engine, query):
    """A function that runs ``query``'s floor once.

    One plain query on a DB-API cursor, rows to dicts, json.dumps.
    """
    sql = str(query.compile(dialect=engine.dialect,
                            compile_kwargs={'literal_binds': True}))
    raw = engine.raw_connection()
    try:
        def run():
            cursor = raw.cursor()
            cursor.execute(sql)
            names = [column[0] for column in cursor.description]
            rows = [dict(zip(names, row)) for row in cursor.fetchall()]
            cursor.close()
            raw.rollback()
            return json.dumps({'items': rows}, default=str)
        run()
        yield run
    finally:
        raw.close()


def measure(port, engine, host, iterations, budget, listings=None):
    """Each listing (of LISTINGS): rows, SQL statements, times, floor.

    A listing and its floor are timed in turn, so that their ratio sees
    the same moments of the machine.
    """
    results = {}
    queries = floor_queries(host)
    client = clients.Client(port)
    try:
        for name, path, version, floor_name in listings or LISTINGS:
            path = path % {'host': host}
            statements, body = _get(client, path, version)
            rows = _rows(body)
            query = queries[floor_name]
            if floor_name not in _WHOLE_FLOORS:
                # The same rows: pages of 2.33+ hold at most max_limit.
                query = query.limit(rows)
            with floor_of(engine, query) as floor:
                times, floor_times = latencies.alternately(
                    [functools.partial(_get, client, path, version), floor],
                    iterations, budget)
            results[name] = _figures(times, floor_times, path=path,
                                     version=version, rows=rows,
                                     bytes=len(body), statements=statements)
    finally:
        client.close()
    return results


def _get(client, path, version):
    """(SQL statements, body) of a listing that must answer 200."""
    status, statements, body = client.request('GET', path, version)
    if status != 200:
        raise RuntimeError('GET %s at %s: %s %s'
                           % (path, version, status, body[:300]))
    return statements, body


def _rows(body):
    """The number of items a listing returned."""
    document = json.loads(body)
    return len(next(value for value in document.values()
                    if isinstance(value, list)))


def _figures(times, floor_times, **listing):
    median = statistics.median(times)
    floor_median = statistics.median(floor_times)
    return dict(
        listing, runs=len(times),
        median_ms=latencies.ms(median),
        p95_ms=latencies.ms(latencies.percentile(times, 0.95)),
        floor_median_ms=latencies.ms(floor_median),
        floor_p95_ms=latencies.ms(latencies.percentile(floor_times, 0.95)),
        ratio_to_floor=round(median / floor_median, 2))
