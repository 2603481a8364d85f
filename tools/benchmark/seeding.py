"""A database of its own for each host count, seeded with N compute hosts."""

import datetime
import json
import os
import shutil
import tempfile
import time
import uuid

import sqlalchemy as sa

from nova_forcedown.db import models

HIDDEN_BINARIES = ('nova-osapi_compute', 'nova-metadata')
OTHER_BINARIES = ('nova-scheduler', 'nova-conductor')


def host_name(index):
    return 'compute-%05d' % index


AGGREGATES = 50
ZONES = 3
# Servers: one on each host, and SERVERS_ON_BUSY_HOST on busy_host(N).
SERVERS_ON_BUSY_HOST = 100
PROJECTS = 100
# Nova's classic flavors: (flavorid, name, memory_mb, vcpus, root_gb).
FLAVORS = (('1', 'm1.tiny', 512, 1, 1), ('2', 'm1.small', 2048, 1, 20),
           ('3', 'm1.medium', 4096, 2, 40), ('4', 'm1.large', 8192, 4, 80),
           ('5', 'm1.xlarge', 16384, 8, 160))
EXTRA_SPECS = {'hw:cpu_policy': 'shared', 'hw:mem_page_size': 'small'}


def busy_host(hosts):
    """The host of the per-host listings, and of the busy host's servers."""
    return host_name(hosts // 2)


def seed(engine, hosts, controllers=3):
    """N computes with nodes, and a few controllers with other binaries.

    Every 10th host is disabled, every 25th has not reported for an hour
    (down), every 50th is forced down; one in four nodes has an uptime in
    its stats. Each host is in one of 50 aggregates; the first 30 of them
    are zones (az0, az1, az2). Servers: see ``_servers``. Returns {host:
    service uuid} of the computes.
    """
    now = datetime.datetime.utcnow().replace(microsecond=0)
    stale = now - datetime.timedelta(hours=1)
    services, nodes, uuids = [], [], {}
    service_id = 0
    for index in range(1, hosts + 1):
        service_id += 1
        host = host_name(index)
        uuids[host] = str(uuid.uuid4())
        services.append(dict(
            id=service_id, uuid=uuids[host], host=host,
            binary='nova-compute', topic='compute', report_count=index,
            disabled=index % 10 == 0,
            disabled_reason='maintenance' if index % 10 == 0 else None,
            last_seen_up=stale if index % 25 == 0 else now,
            forced_down=index % 50 == 0, version=1,
            created_at=now, updated_at=now, deleted_at=None, deleted=0))
        nodes.append(dict(
            id=index, uuid=str(uuid.uuid4()), service_id=service_id,
            host=host, hypervisor_hostname=host + '.example.org',
            hypervisor_type='QEMU', hypervisor_version=8002000,
            host_ip='10.%d.%d.%d' % (index // 65536, index // 256 % 256,
                                     index % 256),
            cpu_info=json.dumps({'arch': 'x86_64', 'model': 'Icelake',
                                 'vendor': 'Intel',
                                 'topology': {'cores': 16, 'sockets': 2,
                                              'threads': 2}}),
            vcpus=64, memory_mb=262144, local_gb=1800, vcpus_used=12,
            memory_mb_used=49152, local_gb_used=240, free_ram_mb=212992,
            free_disk_gb=1560, current_workload=0, running_vms=6,
            disk_available_least=1500,
            stats=json.dumps({'uptime': ' 10:01:02 up 42 days, load '
                                        'average: 0.1, 0.2, 0.3'})
            if index % 4 == 0 else None,
            created_at=now, updated_at=now, deleted_at=None, deleted=0))
    for index in range(1, controllers + 1):
        for binary in OTHER_BINARIES + HIDDEN_BINARIES:
            service_id += 1
            services.append(dict(
                id=service_id, uuid=str(uuid.uuid4()),
                host='controller-%d' % index, binary=binary,
                topic=binary[5:] if binary in OTHER_BINARIES else None,
                report_count=1, disabled=index == controllers,
                disabled_reason=None, last_seen_up=now,
                forced_down=False, version=1,
                created_at=now, updated_at=now, deleted_at=None,
                deleted=0))
    aggregates, metadata, members = _aggregates(hosts, now)
    flavors, specs, instances = _servers(hosts, now)
    with engine.begin() as connection:
        for table, rows in ((models.Service.__table__, services),
                            (models.ComputeNode.__table__, nodes),
                            (models.Aggregate.__table__, aggregates),
                            (models.AggregateMetadata.__table__, metadata),
                            (models.AggregateHost.__table__, members),
                            (models.Flavor.__table__, flavors),
                            (models.FlavorExtraSpec.__table__, specs),
                            (models.Instance.__table__, instances)):
            for start in range(0, len(rows), 2000):
                connection.execute(table.insert(), rows[start:start + 2000])
    if engine.dialect.name == 'postgresql':
        with engine.begin() as connection:
            for table in ('services', 'compute_nodes', 'aggregates',
                          'aggregate_metadata', 'aggregate_hosts', 'flavors',
                          'flavor_extra_specs', 'instances'):
                connection.exec_driver_sql(
                    "SELECT setval(pg_get_serial_sequence('%s', 'id'), "
                    "(SELECT max(id) FROM %s))" % (table, table))
            connection.exec_driver_sql('ANALYZE')
    return uuids


def _aggregates(hosts, now):
    """Rows of the aggregates, their zone metadata and their hosts."""
    aggregates = [dict(id=number, uuid=str(uuid.uuid4()),
                       name='aggregate-%02d' % number, created_at=now)
                  for number in range(1, AGGREGATES + 1)]
    metadata = [dict(aggregate_id=number, key='availability_zone',
                     value='az%d' % (number % ZONES), created_at=now)
                for number in range(1, AGGREGATES * 3 // 5 + 1)]
    members = [dict(aggregate_id=index % AGGREGATES + 1,
                    host=host_name(index), created_at=now)
               for index in range(1, hosts + 1)]
    return aggregates, metadata, members


def _servers(hosts, now):
    """Rows of the flavors, their extra specs and the servers.

    One server on each host, SERVERS_ON_BUSY_HOST on ``busy_host``, of
    PROJECTS projects, each with the copy of its flavor (extra specs
    included) an instance keeps; every 10th is stopped, every 3rd has
    metadata. Created one second apart, so that the newest come first.
    """
    flavors, specs, copies = [], [], []
    for number, (flavorid, name, memory_mb, vcpus, root_gb) in enumerate(
            FLAVORS, 1):
        flavors.append(dict(
            id=number, flavorid=flavorid, name=name, memory_mb=memory_mb,
            vcpus=vcpus, root_gb=root_gb, ephemeral_gb=0, swap=0,
            rxtx_factor=1.0, disabled=False, is_public=True,
            created_at=now))
        specs.extend(dict(flavor_id=number, key=key, value=value,
                          created_at=now)
                     for key, value in EXTRA_SPECS.items())
        copies.append(json.dumps(dict(
            flavorid=flavorid, name=name, memory_mb=memory_mb, vcpus=vcpus,
            root_gb=root_gb, ephemeral_gb=0, swap=0,
            extra_specs=EXTRA_SPECS)))
    placed = [host_name(index) for index in range(1, hosts + 1)]
    placed += [busy_host(hosts)] * (SERVERS_ON_BUSY_HOST - 1)
    instances = []
    for index, host in enumerate(placed, 1):
        project = 'project-%03d' % (index % PROJECTS)
        created = now - datetime.timedelta(seconds=len(placed) - index)
        stopped = index % 10 == 0
        instances.append(dict(
            id=index, uuid=str(uuid.uuid4()),
            display_name='server-%05d' % index, host=host,
            node=host + '.example.org',
            vm_state='stopped' if stopped else 'active',
            power_state=4 if stopped else 1, task_state=None,
            project_id=project, user_id='user-of-' + project,
            instance_type_id=index % len(FLAVORS) + 1,
            flavor=copies[index % len(FLAVORS)],
            image_ref='70a599e0-31e7-49b7-b260-868f441e862b',
            hostname='server-%05d' % index, key_name='key-' + project,
            launched_at=created, availability_zone=None,
            user_metadata=json.dumps({'role': 'web', 'index': str(index)})
            if index % 3 == 0 else None,
            created_at=created, updated_at=None, deleted=0))
    return flavors, specs, instances


class Database:
    """A fresh, empty database: a temp SQLite file or one on a server."""

    def __init__(self, server_url=None):
        self.directory = tempfile.mkdtemp(prefix='nf-benchmark-')
        self.server_url = server_url
        self.name = None
        if server_url is None:
            self.url = sa.engine.make_url(
                'sqlite:///' + os.path.join(self.directory, 'nf.sqlite'))
        else:
            self.name = 'nf_benchmark_%d_%d' % (os.getpid(),
                                                int(time.time() * 1000))
            self._admin(['CREATE DATABASE %s' % self.name])
            self.url = sa.engine.make_url(server_url).set(database=self.name)
        self.url_text = self.url.render_as_string(hide_password=False)

    def _admin(self, statements):
        engine = sa.create_engine(self.server_url,
                                  isolation_level='AUTOCOMMIT',
                                  poolclass=sa.pool.NullPool)
        try:
            with engine.connect() as connection:
                for statement in statements:
                    connection.exec_driver_sql(statement)
        finally:
            engine.dispose()

    @property
    def backend(self):
        return self.url.get_backend_name()

    def drop(self):
        if self.name is not None:
            if self.backend == 'postgresql':
                self._admin([
                    'SELECT pg_terminate_backend(pid) FROM pg_stat_activity '
                    "WHERE datname = '%s' AND pid <> pg_backend_pid()"
                    % self.name])
            self._admin(['DROP DATABASE IF EXISTS %s' % self.name])
        shutil.rmtree(self.directory, ignore_errors=True)
