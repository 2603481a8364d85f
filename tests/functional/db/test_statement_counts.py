"""Listings issue the same few SQL statements at 10 hosts and at 500.

A force-down is a locked read of the service, one UPDATE and the INSERT of
its history entry, in one transaction (SQLite takes its write lock first
with an UPDATE that changes nothing); from 2.53, whose answer shows the
service's zone, one read of its host's aggregates after it. With the
fence-storm guard on, three reads more (the host's zones, the zone's
services locked, the target's row; on PostgreSQL the zones and the
members once more), whatever the size of the zone.

Not a timing test: it counts the statements each listing runs through the
real WSGI app (paste pipeline, noauth2) on SQLite, PostgreSQL and MariaDB,
and asserts the count does not grow with the number of hosts and stays at
most three (the listing, the services' zones or a paging marker's lookup,
the instances of ``with_servers``).
"""

import datetime
import uuid

from oslo_serialization import jsonutils
from oslo_utils import timeutils
import sqlalchemy as sa
import webob

from nova_forcedown.api import deploy
from nova_forcedown.db import models
from tests.fixtures import configuration
from tests.fixtures import databases
from tests.fixtures import sql_statements

ADMIN_TOKEN = 'admin:6f70656e737461636b'
MAX_STATEMENTS = 3

# (path, microversion): every listing of services and hypervisors.
LISTINGS = [
    ('/os-services', '2.1'),
    ('/os-services', '2.11'),
    ('/os-services', '2.53'),
    ('/os-services?binary=nova-compute', '2.88'),
    ('/os-services?host=host-00003', '2.53'),
    ('/os-hypervisors', '2.1'),
    ('/os-hypervisors/detail', '2.1'),
    ('/os-hypervisors/detail', '2.28'),
    ('/os-hypervisors', '2.33'),
    ('/os-hypervisors/detail?limit=5', '2.33'),
    ('/os-hypervisors/detail?limit=5&marker=%(marker_id)s', '2.33'),
    ('/os-hypervisors', '2.53'),
    ('/os-hypervisors/detail', '2.53'),
    ('/os-hypervisors?with_servers=true', '2.53'),
    ('/os-hypervisors/detail?with_servers=true', '2.53'),
    ('/os-hypervisors/detail?limit=5&marker=%(marker_uuid)s', '2.53'),
    ('/os-hypervisors?hypervisor_hostname_pattern=host', '2.53'),
    ('/os-hypervisors/detail?with_servers=true', '2.75'),
    ('/os-hypervisors', '2.88'),
    ('/os-hypervisors/detail', '2.88'),
    ('/os-hypervisors/detail?with_servers=true', '2.88'),
    ('/os-hypervisors/host/search', '2.1'),
    ('/os-hypervisors/host/servers', '2.1'),
    ('/os-hypervisors/statistics', '2.1'),
    ('/os-availability-zone', '2.1'),
    ('/os-availability-zone/detail', '2.1'),
]

ZONE_LISTINGS = ('/os-availability-zone', '/os-availability-zone/detail')

# (path, microversion, statements): server listings of all projects. A
# detail listing reads the servers, their hosts' compute services (for
# host_status, from 2.16), zones and the page's tags (from 2.26); the
# services and zones of one host are one read. A marker is one more read,
# and so are none of the tag filters.
SERVER_LISTINGS = [
    ('/servers?all_tenants=1', '2.1', 1),
    ('/servers/detail?all_tenants=1', '2.1', 2),
    ('/servers/detail?all_tenants=1', '2.100', 4),
    ('/servers/detail?all_tenants=1&host=host-00003', '2.53', 3),
    ('/servers/detail?all_tenants=1&status=ACTIVE&limit=5', '2.100', 4),
    ('/servers/detail?all_tenants=1&limit=5&marker=%(server)s', '2.100', 5),
    ('/servers/detail?all_tenants=1&tags=even&tags-any=even,odd&'
     'not-tags=odd,red&not-tags-any=blue&name=^server-', '2.100', 4),
    ('/servers?all_tenants=1&tags-any=even', '2.26', 1),
    # One server shown: it and its tags, its host's service and zones.
    ('/servers/%(server)s', '2.100', 2),
]


AGGREGATES = 5


def _add_aggregates(connection, now):
    """Five aggregates, the first three of them zones."""
    connection.execute(sa.insert(models.Aggregate), [
        dict(id=number, uuid=str(uuid.uuid4()), name='aggregate-%d' % number,
             created_at=now) for number in range(1, AGGREGATES + 1)])
    connection.execute(sa.insert(models.AggregateMetadata), [
        dict(aggregate_id=number, key='availability_zone',
             value='az%d' % number, created_at=now) for number in (1, 2, 3)])


def add_hosts(engine, first, last):
    """Compute hosts ``first``..``last`` with nodes and two tagged instances.

    Some disabled, some forced down, some with an old heartbeat, so that
    every branch of the views runs; each in one of five aggregates, three
    of them zones. Inserted in bulk, as a scale test needs.
    """
    now = timeutils.utcnow().replace(microsecond=0)
    services, nodes, instances, members, tags = [], [], [], [], []
    for index in range(first, last + 1):
        host = 'host-%05d' % index
        services.append(dict(
            id=index, uuid=str(uuid.uuid4()), host=host,
            binary='nova-compute', topic='compute', report_count=1,
            disabled=index % 3 == 0,
            disabled_reason='maintenance' if index % 3 == 0 else None,
            forced_down=index % 5 == 0, version=1,
            last_seen_up=now - datetime.timedelta(
                hours=1 if index % 7 == 0 else 0),
            created_at=now, deleted=0))
        nodes.append(dict(
            id=index, uuid=str(uuid.uuid4()), service_id=index, host=host,
            hypervisor_hostname=host + '.example.org',
            hypervisor_type='QEMU', hypervisor_version=8002000,
            host_ip='192.0.2.%d' % (index % 250 + 1),
            cpu_info=jsonutils.dumps({'arch': 'x86_64'}), vcpus=8,
            memory_mb=16384, local_gb=100, vcpus_used=1, memory_mb_used=512,
            local_gb_used=1, free_ram_mb=15872, free_disk_gb=99,
            current_workload=0, running_vms=2, disk_available_least=90,
            stats=jsonutils.dumps({'uptime': 'up %d days' % index}),
            created_at=now, deleted=0))
        members.append(dict(aggregate_id=index % AGGREGATES + 1, host=host,
                            created_at=now))
        for server in range(2):
            instances.append(dict(
                uuid=str(uuid.uuid4()), display_name='server-%d' % server,
                host=host, node=host, vm_state='active', created_at=now,
                deleted=0))
            tags.extend(dict(resource_id=instances[-1]['uuid'], tag=tag)
                        for tag in ('odd' if server else 'even', 'red'))
    with engine.begin() as connection:
        if first == 1:
            _add_aggregates(connection, now)
        connection.execute(sa.insert(models.AggregateHost), members)
        connection.execute(sa.insert(models.Service), services)
        connection.execute(sa.insert(models.ComputeNode), nodes)
        connection.execute(sa.insert(models.Instance), instances)
        connection.execute(sa.insert(models.Tag), tags)
        if engine.dialect.name == 'postgresql':
            for table in ('services', 'compute_nodes'):
                connection.exec_driver_sql(
                    "SELECT setval(pg_get_serial_sequence('%s', 'id'), "
                    "(SELECT max(id) FROM %s))" % (table, table))


class StatementCountsMixin:

    def setUp(self):
        super().setUp()
        conf = self.useFixture(configuration.ConfFixture(
            api__auth_strategy='noauth2')).conf
        self.conf = conf
        self.app = deploy.load_app(conf)
        with self.engine.begin() as connection:
            # A controller host with other binaries, one hidden.
            connection.execute(sa.insert(models.Service), [
                dict(id=100000 + number, uuid=str(uuid.uuid4()),
                     host='controller', binary=binary, topic=topic,
                     report_count=1, disabled=False, forced_down=False,
                     version=1, created_at=timeutils.utcnow(), deleted=0)
                for number, (binary, topic) in enumerate((
                    ('nova-scheduler', 'scheduler'),
                    ('nova-osapi_compute', None)))])

    def _counts(self, marker_id, marker_uuid, paths=None):
        counts = {}
        listings = (LISTINGS if paths is None else
                    [(path, '2.1') for path in paths])
        for path, version in listings:
            path = path % {'marker_id': marker_id, 'marker_uuid': marker_uuid}
            request = webob.Request.blank(
                '/v2.1' + path, headers={
                    'X-Auth-Token': ADMIN_TOKEN,
                    'OpenStack-API-Version': 'compute ' + version})
            with sql_statements.recorded_statements(self.engine) as statements:
                response = request.get_response(self.app)
            self.assertEqual(200, response.status_int,
                             '%s at %s: %s' % (path, version, response.body))
            counts[(path, version)] = len(statements)
        return counts

    def _marker(self):
        with self.engine.connect() as connection:
            return connection.execute(
                sa.select(models.ComputeNode.id, models.ComputeNode.uuid)
                .where(models.ComputeNode.id == 3)).one()

    def test_statements_do_not_grow_with_hosts(self):
        add_hosts(self.engine, 1, 10)
        marker = self._marker()
        small = self._counts(*marker)
        add_hosts(self.engine, 11, 500)
        large = self._counts(*marker)
        self.assertEqual(small, large)
        too_many = {listing: count for listing, count in large.items()
                    if count > MAX_STATEMENTS}
        self.assertEqual({}, too_many)

    def test_zone_listings_are_two_statements(self):
        """The services, and the zones of the hosts in zone aggregates."""
        add_hosts(self.engine, 1, 10)
        small = self._counts(None, None, ZONE_LISTINGS)
        add_hosts(self.engine, 11, 500)
        self.assertEqual({listing: 2 for listing in small},
                         self._counts(None, None, ZONE_LISTINGS))

    def _server_counts(self, marker):
        counts = {}
        for path, version, _ in SERVER_LISTINGS:
            request = webob.Request.blank(
                '/v2.1' + path % {'server': marker}, headers={
                    'X-Auth-Token': ADMIN_TOKEN,
                    'OpenStack-API-Version': 'compute ' + version})
            with sql_statements.recorded_statements(self.engine) as statements:
                response = request.get_response(self.app)
            self.assertEqual(200, response.status_int, response.body)
            counts[(path, version)] = len(statements)
        return counts

    def test_server_listings_do_not_grow_with_servers(self):
        add_hosts(self.engine, 1, 10)
        with self.engine.connect() as connection:
            marker = connection.execute(
                sa.select(models.Instance.uuid).where(
                    models.Instance.host == 'host-00004')).scalars().first()
        small = self._server_counts(marker)
        add_hosts(self.engine, 11, 500)
        self.assertEqual(small, self._server_counts(marker))
        self.assertEqual({(path, version): count for path, version, count
                          in SERVER_LISTINGS}, small)

    def _put(self, path, version, body):
        request = webob.Request.blank(
            '/v2.1' + path, method='PUT', headers={
                'X-Auth-Token': ADMIN_TOKEN,
                'OpenStack-API-Version': 'compute ' + version})
        request.json_body = body
        with sql_statements.recorded_statements(self.engine) as statements:
            response = request.get_response(self.app)
        self.assertEqual(200, response.status_int, response.body)
        return statements

    def _force_down_counts(self):
        """Statements of a 2.11 and a 2.53 force-down (hosts 1 and 2)."""
        with self.engine.connect() as connection:
            uuid_of_host_2 = connection.execute(
                sa.select(models.Service.uuid)
                .where(models.Service.host == 'host-00002')).scalar_one()
        counts = []
        for path, version, body in (
                ('/os-services/force-down', '2.11',
                 {'host': 'host-00001', 'binary': 'nova-compute',
                  'forced_down': True}),
                ('/os-services/' + uuid_of_host_2, '2.53',
                 {'forced_down': True})):
            statements = self._put(path, version, body)
            self.assertIn('UPDATE services SET forced_down', ' '.join(
                statements))
            self.assertTrue(statements[-1 if version == '2.11' else -2]
                            .lstrip().upper().startswith(
                                'INSERT INTO SERVICE_HISTORY'), statements)
            counts.append(len(statements))
        return counts

    def _write_lock(self):
        """SQLite's write-first UPDATE: one statement more there."""
        return 1 if self.engine.dialect.name == 'sqlite' else 0

    def test_force_down_is_one_update_and_its_history(self):
        add_hosts(self.engine, 1, 10)
        # The locked read, the UPDATE, the history INSERT; from 2.53, one
        # read more, of the host's aggregates for the answer's zone.
        self.assertEqual([3 + self._write_lock(), 4 + self._write_lock()],
                         self._force_down_counts())

    def test_guarded_force_down_does_not_grow_with_the_zone(self):
        self.conf.set_override('max_forced_down_fraction', 1.0,
                               group='fencing')
        add_hosts(self.engine, 1, 500)
        # The target, its host's zones, the zone's services locked (their
        # ids and states only), the target's whole row, the UPDATE, the
        # history INSERT (and the 2.53 answer's zone read). On PostgreSQL
        # the host's zones and the zone's members are read once more, once
        # locked: a statement that waited for a lock sees the aggregates as
        # they were when it began.
        reread = 2 if self.engine.dialect.name == 'postgresql' else 0
        self.assertEqual([6 + self._write_lock() + reread,
                          7 + self._write_lock() + reread],
                         self._force_down_counts())

    def _add_flavors(self, first, last):
        """Flavors ``first``..``last``, each with two extra specs."""
        now = timeutils.utcnow()
        with self.engine.begin() as connection:
            connection.execute(sa.insert(models.Flavor), [
                dict(id=number, flavorid=str(number), name='f%d' % number,
                     memory_mb=number, vcpus=1, root_gb=1, ephemeral_gb=0,
                     swap=0, rxtx_factor=1.0, disabled=False,
                     is_public=number % 2 == 0, created_at=now)
                for number in range(first, last + 1)])
            connection.execute(sa.insert(models.FlavorExtraSpec), [
                dict(flavor_id=number, key=key, value='true',
                     created_at=now)
                for number in range(first, last + 1)
                for key in ('evacuable', 'hw:cpu_policy')])

    def test_flavor_listings_do_not_grow_with_flavors(self):
        """The flavors, and their extra specs (and a marker's lookup)."""
        paths = ['/flavors', '/flavors/detail?is_public=None',
                 '/flavors/detail?minRam=2&sort_key=name&limit=50&marker=3']
        self._add_flavors(1, 10)
        small = self._counts(None, None, paths)
        self._add_flavors(11, 400)
        self.assertEqual(small, self._counts(None, None, paths))
        self.assertEqual([2, 2, 3], list(small.values()))

    def _evacuation_count(self, host):
        """Statements of evacuating a server of ``host`` in zone az3."""
        with self.engine.begin() as connection:
            server = connection.execute(
                sa.select(models.Instance.uuid)
                .where(models.Instance.host == host).limit(1)).scalar()
            connection.execute(
                sa.update(models.Instance)
                .where(models.Instance.uuid == server)
                .values(launched_at=timeutils.utcnow(), vcpus=1,
                        memory_mb=512, root_gb=1, availability_zone='az3'))
        request = webob.Request.blank(
            '/v2.1/servers/%s/action' % server, method='POST', headers={
                'X-Auth-Token': ADMIN_TOKEN,
                'OpenStack-API-Version': 'compute 2.53'})
        request.json_body = {'evacuate': {}}
        with sql_statements.recorded_statements(self.engine) as statements:
            response = request.get_response(self.app)
        self.assertEqual(200, response.status_int, response.body)
        with self.engine.connect() as connection:
            status = connection.execute(
                sa.select(models.Migration.status)
                .where(models.Migration.instance_uuid == server)).scalar()
        self.assertEqual('accepted', status)
        return len(statements)

    def test_evacuation_does_not_grow_with_the_zone(self):
        """Ten statements, whatever the zone.

        Reads: the server, the zone's hosts, their compute services and
        the source's with their nodes and usage (one query); then, in one
        transaction, the server locked, the chosen node locked and its
        usage, the history entry, the migration, the server's move and its
        action record. (SQLite takes its write lock first, and needs no lock of
        the node then.)
        """
        add_hosts(self.engine, 1, 10)
        # host-00007 and host-00042 are down (an old heartbeat), in az3.
        small = self._evacuation_count('host-00007')
        add_hosts(self.engine, 11, 500)
        self.assertEqual([10] * 2,
                         [small, self._evacuation_count('host-00042')])

    def test_listings_of_500_hosts_are_complete(self):
        add_hosts(self.engine, 1, 500)
        for path, key, expected in (
                ('/os-services', 'services', 501),
                ('/os-hypervisors/detail', 'hypervisors', 500),
                ('/servers/detail?all_tenants=1', 'servers', 1000)):
            response = webob.Request.blank(
                '/v2.1' + path, headers={'X-Auth-Token': ADMIN_TOKEN}
            ).get_response(self.app)
            self.assertEqual(expected, len(response.json[key]))


databases.backend_test_cases(StatementCountsMixin, globals())
