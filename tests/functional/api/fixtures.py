"""Gabbi fixtures: the real app on a real, migrated SQLite database.

Each YAML file runs inside its own fixtures, so it gets a fresh database
file, a private ConfigOpts and an app built from api-paste.ini. The
enginefacade is configured once per process at most, so the database is
patched into :data:`nova_forcedown.db.engine.context_manager` for the duration
of one file and restored afterwards.

gabbi (4.x) builds its HTTP client, and so calls :func:`setup_app`, when it
loads the tests, before any fixture has run: the app it gets is a small
proxy to the app of the running file.
"""

import datetime
import os
import shutil
import tempfile

from gabbi import fixture
from oslo_db.sqlalchemy import enginefacade
from oslo_serialization import jsonutils
from oslo_utils import timeutils
import sqlalchemy as sa
import webob

from nova_forcedown.api import deploy
from nova_forcedown import conf as nf_conf
from nova_forcedown import context
from nova_forcedown.db import aggregates as db_aggregates
from nova_forcedown.db import engine as db_engine
from nova_forcedown.db import flavors as db_flavors
from nova_forcedown.db import models
from nova_forcedown.db import schema
from nova_forcedown.objects import aggregate as aggregate_obj
from nova_forcedown.objects import flavor as flavor_obj
from nova_forcedown.objects import instance as instance_obj
from nova_forcedown.objects import service as service_obj
from tests import fixtures as nf_fixtures

ADMIN_PROJECT = '6f70656e737461636b'
USER_PROJECT = 'c0ffee00c0ffee00'
OTHER_PROJECT = 'bead0000bead0000'

_RUNNING = {}


def setup_app():
    """The intercept factory given to gabbi."""
    def app(environ, start_response):
        return _RUNNING['app'](environ, start_response)
    return app


def call_app(app, method, path, version=None, body=None, headers=None):
    """Send one request to ``app``; ``body`` is sent as JSON."""
    req = webob.Request.blank(path, method=method)
    req.headers.update(headers or {})
    if version:
        req.headers['OpenStack-API-Version'] = 'compute ' + version
    if body is not None:
        req.content_type = 'application/json'
        req.body = jsonutils.dump_as_bytes(body)
    return req.get_response(app)


def make_conf(**overrides):
    """A private ConfigOpts with noauth2; overrides are 'group.option'."""
    conf = nf_conf.make_conf([], default_config_files=[],
                             default_config_dirs=[])
    conf.set_override('auth_strategy', 'noauth2', group='api')
    for name, value in overrides.items():
        group, _, option = name.rpartition('.')
        conf.set_override(option, value, group=group or None)
    return conf


class Database:
    """A migrated SQLite file patched into the project's enginefacade."""

    def __init__(self):
        self.directory = tempfile.mkdtemp(prefix='nova-forcedown-gabbi-')
        url = 'sqlite:///' + os.path.join(self.directory, 'api.sqlite')
        facade = enginefacade.transaction_context()
        facade.configure(connection=url)
        self.engine = facade.writer.get_engine()
        schema.db_sync(self.engine)
        self._reset = db_engine.context_manager.patch_factory(facade)

    def close(self):
        self._reset()
        self.engine.dispose()
        shutil.rmtree(self.directory, ignore_errors=True)


def seeded_database(test):
    """A fresh Database for ``test``, holding every kind of compute host.

    And two aggregates without zone or host (``MATRIX_AGGREGATE_ID``,
    ``DOOMED_AGGREGATE_ID``), and the flavors of FlavorsFixture. For tests
    that build the app themselves, outside a gabbi file.
    """
    database = Database()
    test.addCleanup(database.close)
    ComputeHostsFixture().start_fixture()
    FlavorsFixture().start_fixture()
    ctxt = context.get_admin_context()
    for label, name in (('MATRIX', 'matrix'), ('DOOMED', 'doomed')):
        aggregate = aggregate_obj.Aggregate.create(ctxt, name)
        os.environ[label + '_AGGREGATE_ID'] = str(aggregate.id)
    return database


class APIFixture(fixture.GabbiFixture):
    """The app with default settings on an empty database."""

    OVERRIDES = {}

    def start_fixture(self):
        os.environ['ADMIN_PROJECT'] = ADMIN_PROJECT
        os.environ['USER_PROJECT'] = USER_PROJECT
        self.conf = make_conf(**self.OVERRIDES)
        self.database = Database()
        _RUNNING['app'] = deploy.load_app(self.conf)
        _RUNNING['conf'] = self.conf
        self.seed(context.get_admin_context())

    def stop_fixture(self):
        _RUNNING.clear()
        self.database.close()
        self.conf.reset()

    def seed(self, ctxt):
        pass


class DisabledHypervisorStatusFixture(APIFixture):
    """/v2 without the os-hypervisor-status extension."""

    OVERRIDES = {'api.disabled_extensions': ['os-hypervisor-status']}


class ForceDownMarksShutdownFixture(APIFixture):
    """A force-down also marks the host's servers powered off."""

    OVERRIDES = {'force_down_marks_instances_shutdown': True}


class SmallBodyLimitFixture(APIFixture):
    """Bodies over 1 KiB are refused, so a 413 is cheap to provoke."""

    OVERRIDES = {'wsgi.max_request_body_size': 1024}


class FencingFixture(APIFixture):
    """[fencing] max_forced_down_fraction = 0.5: the fence-storm guard on."""

    OVERRIDES = {'fencing.max_forced_down_fraction': 0.5}


class SmallPageFixture(APIFixture):
    """[api] max_limit = 2, to show that it caps the page size."""

    OVERRIDES = {'api.max_limit': 2}


def _ago(seconds):
    return timeutils.utcnow() - datetime.timedelta(seconds=seconds)


class ComputeHostsFixture(fixture.GabbiFixture):
    """Hosts in every state, exported as environment variables.

    ========  ========  =========================  ====================
    host      status    state                      node
    ========  ========  =========================  ====================
    host1     enabled   up (fresh heartbeat)       host1.example.org
    host2     disabled  up, reason "maintenance"   host2.example.org
    host3     enabled   down: forced down          host_3.example.org
    host4     enabled   down: heartbeat 1 h old    host4.example.org
    ========  ========  =========================  ====================

    host1 has two instances and uptime in its node stats; host4's node has
    an empty cpu_info. ``controller`` runs a nova-scheduler and the hidden
    nova-osapi_compute and nova-metadata. A node whose host has no service
    (``ghost.example.org``) is skipped by every listing.

    Variables: ``<HOST>_SERVICE_ID`` / ``_SERVICE_UUID``, ``<HOST>_NODE_ID``
    / ``_NODE_UUID`` (HOST in HOST1..HOST4, SCHEDULER, API, GHOST for the
    node), ``SERVER_A_UUID`` and ``SERVER_B_UUID``.
    """

    def start_fixture(self):
        ctxt = context.get_admin_context()
        fresh = _ago(1)
        host1 = self._service(ctxt, 'HOST1', 'host1', last_seen_up=fresh)
        host2 = self._service(ctxt, 'HOST2', 'host2', last_seen_up=fresh,
                              disabled=True, disabled_reason='maintenance')
        host3 = self._service(ctxt, 'HOST3', 'host3', last_seen_up=fresh,
                              forced_down=True)
        host4 = self._service(ctxt, 'HOST4', 'host4',
                              last_seen_up=_ago(3600))
        self._service(ctxt, 'SCHEDULER', 'controller',
                      binary='nova-scheduler', topic='scheduler',
                      last_seen_up=fresh)
        self._service(ctxt, 'API', 'controller',
                      binary='nova-osapi_compute', topic=None)
        self._service(ctxt, 'METADATA', 'controller',
                      binary='nova-metadata', topic=None)
        self._node(ctxt, 'HOST1', host1, 'host1.example.org',
                   cpu_info=jsonutils.dumps({'arch': 'x86_64'}),
                   stats={'uptime': ' 08:32:11 up 93 days, load average: '
                                    '0.09, 0.10, 0.09'})
        self._node(ctxt, 'HOST2', host2, 'host2.example.org')
        self._node(ctxt, 'HOST3', host3, 'host_3.example.org')
        self._node(ctxt, 'HOST4', host4, 'host4.example.org', cpu_info='')
        self._node(ctxt, 'GHOST', None, 'ghost.example.org', host='ghost')
        for name, label in (('server-a', 'SERVER_A'),
                            ('server-b', 'SERVER_B')):
            instance = nf_fixtures.create_instance(ctxt, 'host1', name=name)
            os.environ[label + '_UUID'] = instance.uuid

    def stop_fixture(self):
        pass

    @staticmethod
    def _service(ctxt, label, host, **fields):
        service = nf_fixtures.create_service(ctxt, host=host, **fields)
        os.environ[label + '_SERVICE_ID'] = str(service.id)
        os.environ[label + '_SERVICE_UUID'] = service.uuid
        return service

    @staticmethod
    def _node(ctxt, label, service, hostname, **fields):
        node = nf_fixtures.create_compute_node(ctxt, service, hostname,
                                               **fields)
        os.environ[label + '_NODE_ID'] = str(node.id)
        os.environ[label + '_NODE_UUID'] = node.uuid
        return node


class HostInZoneFixture(fixture.GabbiFixture):
    """host1, with its two instances, in aggregate ``zone-a`` of that zone.

    Written straight to the database, as an upgrade from per-service zones
    leaves such a host: through the API, the zone rules refuse to move a
    host with instances into a zone. Needs ComputeHostsFixture first.
    Variable: ``ZONE_A_ID``, the aggregate's id.
    """

    def start_fixture(self):
        ctxt = context.get_admin_context()
        aggregate = db_aggregates.aggregate_create(
            ctxt, 'zone-a', {db_aggregates.AZ_KEY: 'zone-a'})
        db_aggregates.aggregate_host_add(ctxt, aggregate.id, 'host1')
        os.environ['ZONE_A_ID'] = str(aggregate.id)

    def stop_fixture(self):
        pass


class AggregatesFixture(fixture.GabbiFixture):
    """Aggregates for the API samples; needs ComputeHostsFixture first.

    ``agg1`` is zone ``az1``, holds host2 (no instances) and has metadata
    ``ssd=true``; ``rack-3`` has no zone, no host and no metadata.
    Variables: ``AGG1_ID`` and ``RACK3_ID``.
    """

    def start_fixture(self):
        ctxt = context.get_admin_context()
        agg1 = aggregate_obj.Aggregate.create(ctxt, 'agg1',
                                              availability_zone='az1')
        agg1.update_metadata({'ssd': 'true'})
        aggregate_obj.Aggregate.add_host_to(ctxt, agg1.id, 'host2')
        rack3 = aggregate_obj.Aggregate.create(ctxt, 'rack-3')
        os.environ['AGG1_ID'] = str(agg1.id)
        os.environ['RACK3_ID'] = str(rack3.id)

    def stop_fixture(self):
        pass


class ZonesFixture(fixture.GabbiFixture):
    """Aggregates that put ComputeHostsFixture's hosts in zones.

    ========  ========================================================
    zone      services
    ========  ========================================================
    az1       host1 (up), host3 (forced down), host5 (disabled, new)
    az2       host2 (disabled): the zone is unavailable
    az3       none: an aggregate's zone without hosts is not listed
    nova      host4 (down, no zone aggregate; the default zone)
    internal  controller's nova-scheduler and API services
    ========  ========================================================

    host1 and host4 are also in ``gpu``, an aggregate without a zone.
    host4's service has a non-null ``updated_at``. The rows are written
    under the zone rules' feet: host1's instances would keep it from
    joining a zone through the Aggregate object.
    """

    def start_fixture(self):
        ctxt = context.get_admin_context()
        nf_fixtures.create_service(ctxt, host='host5', disabled=True,
                                   disabled_reason='racking')
        for name, zone, hosts in (('rack-a', 'az1', ['host1', 'host3',
                                                     'host5']),
                                  ('rack-b', 'az2', ['host2']),
                                  ('spare', 'az3', []),
                                  ('gpu', None, ['host1', 'host4'])):
            metadata = {db_aggregates.AZ_KEY: zone} if zone else None
            aggregate = db_aggregates.aggregate_create(ctxt, name, metadata)
            for host in hosts:
                db_aggregates.aggregate_host_add(ctxt, aggregate.id, host)
        host4 = service_obj.Service.get_by_host_and_binary(
            ctxt, 'host4', service_obj.COMPUTE_BINARY)
        host4.disabled = False
        host4.save()

    def stop_fixture(self):
        pass


class FenceStormZonesFixture(fixture.GabbiFixture):
    """Compute hosts without instances in zones, for the fence-storm guard.

    ========  ===========  ============================================
    zone      aggregate    services
    ========  ===========  ============================================
    az1       rack-1       r1a, r1b, r1c, r1d
    az2       rack-2       r2a, r2b
    az3       rack-3       r3a, r3b, both forced down: over any limit,
                           as a zone can be when the guard is turned on
    nova      (none)       na, nb: the default zone
    ========  ===========  ============================================

    ``spare`` is an aggregate without a zone or a host. Variables:
    ``RACK1_ID``, ``RACK2_ID``, ``RACK3_ID``, ``SPARE_ID`` and
    ``<HOST>_SERVICE_UUID`` (HOST in R1A..R3B, NA, NB).
    """

    ZONES = (('rack-1', 'az1', ('r1a', 'r1b', 'r1c', 'r1d')),
             ('rack-2', 'az2', ('r2a', 'r2b')),
             ('rack-3', 'az3', ('r3a', 'r3b')),
             ('spare', None, ()))
    UNZONED = ('na', 'nb')

    def start_fixture(self):
        ctxt = context.get_admin_context()
        for name, zone, hosts in self.ZONES:
            metadata = {db_aggregates.AZ_KEY: zone} if zone else None
            aggregate = db_aggregates.aggregate_create(ctxt, name, metadata)
            os.environ[name.replace('-', '').upper() + '_ID'] = str(
                aggregate.id)
            for host in hosts:
                self._service(ctxt, host, forced_down=zone == 'az3')
                db_aggregates.aggregate_host_add(ctxt, aggregate.id, host)
        for host in self.UNZONED:
            self._service(ctxt, host)

    def stop_fixture(self):
        pass

    @staticmethod
    def _service(ctxt, host, **fields):
        service = nf_fixtures.create_service(
            ctxt, host=host, last_seen_up=_ago(1), **fields)
        os.environ[host.upper() + '_SERVICE_UUID'] = service.uuid


def _created(minute):
    return datetime.datetime(2026, 1, 2, 3, minute, 0)


# The flavor row ServersFixture writes, and the copy its servers keep.
SMALL_FLAVOR = {'flavorid': '2', 'name': 'm1.small', 'memory_mb': 2048,
                'vcpus': 1, 'root_gb': 20, 'ephemeral_gb': 0, 'swap': 0}


class ServersFixture(fixture.GabbiFixture):
    """Servers of three projects on ComputeHostsFixture's hosts.

    ==========  =======  =============  ===================  ==========
    server      host     project        vm_state / task      created
    ==========  =======  =============  ===================  ==========
    web-1       host1    USER_PROJECT   active               03:01
    web-2       host2    USER_PROJECT   stopped (SHUTOFF)    03:02
    db-1        host3    OTHER_PROJECT  error                03:03
    db-2        host4    ADMIN_PROJECT  active / rebooting   03:04
    pending     (none)   USER_PROJECT   building             03:05
    gone        host1    USER_PROJECT   deleted (soft)       03:06
    ==========  =======  =============  ===================  ==========

    host1 is up, host2 disabled, host3 forced down, host4's heartbeat
    stale. ComputeHostsFixture's server-a and server-b (host1, no
    project, created now) come first in an all-projects listing. Every
    server here was built with m1.small (flavor id 2, extra spec
    ``hw:cpu_policy=shared``); web-1 has image ``IMAGE`` and metadata
    ``HA_Enabled=True``; db-2 is locked by an admin ("maintenance").
    Variables: ``<NAME>_UUID`` (WEB1, WEB2, DB1, DB2, PENDING, GONE).
    """

    SERVERS = (
        ('WEB1', 'web-1', 'host1', USER_PROJECT, 'active', None, 1, 1),
        ('WEB2', 'web-2', 'host2', USER_PROJECT, 'stopped', None, 4, 2),
        ('DB1', 'db-1', 'host3', OTHER_PROJECT, 'error', None, 1, 3),
        ('DB2', 'db-2', 'host4', ADMIN_PROJECT, 'active', 'rebooting', 1,
         4),
        ('PENDING', 'pending', None, USER_PROJECT, 'building', None, 0, 5),
        ('GONE', 'gone', 'host1', USER_PROJECT, 'active', None, 1, 6),
    )
    EXTRA = {
        'WEB1': {'image_ref': '70a599e0-31e7-49b7-b260-868f441e862b',
                 'user_metadata': {'HA_Enabled': 'True'}, 'key_name': 'key',
                 'hostname': 'web-1', 'progress': 0},
        'DB2': {'locked_by': 'admin', 'locked_reason': 'maintenance',
                'display_description': 'the database'},
    }

    def start_fixture(self):
        os.environ['OTHER_PROJECT'] = OTHER_PROJECT
        ctxt = context.get_admin_context()
        flavor = dict(SMALL_FLAVOR, extra_specs={'hw:cpu_policy': 'shared'})
        flavor_id = self._small_flavor_id(ctxt)
        for (label, name, host, project, vm_state, task_state, power_state,
             minute) in self.SERVERS:
            instance = instance_obj.Instance(
                ctxt, display_name=name, host=host, node=host,
                project_id=project, user_id='user-of-' + project,
                vm_state=vm_state, task_state=task_state,
                power_state=power_state, instance_type_id=flavor_id,
                flavor=flavor, created_at=_created(minute),
                launched_at=_created(minute) if host else None,
                **self.EXTRA.get(label, {}))
            instance.create()
            os.environ[label + '_UUID'] = instance.uuid
            if label == 'GONE':
                nf_fixtures.soft_delete_row(self.engine(), models.Instance,
                                            instance.id)

    @staticmethod
    def _small_flavor_id(ctxt):
        """m1.small's row: FlavorsFixture's when it ran first, else new."""
        flavors = models.Flavor.__table__
        with db_engine.context_manager.writer.using(ctxt) as session:
            existing = session.execute(
                sa.select(flavors.c.id).where(
                    flavors.c.flavorid == SMALL_FLAVOR['flavorid'])
            ).scalar()
            if existing is not None:
                return existing
            return session.execute(flavors.insert().values(
                disabled=False, is_public=True, created_at=_created(0),
                **SMALL_FLAVOR)).inserted_primary_key[0]

    @staticmethod
    def engine():
        return db_engine.context_manager.writer.get_engine()


class FlavorsFixture(fixture.GabbiFixture):
    """Nova's classic flavors and a few that only some callers see.

    ========  =========  ======  =============  ========
    flavorid  name       public  shared with    disabled
    ========  =========  ======  =============  ========
    1 - 5     m1.tiny..  yes                    no
    10        m1.big     yes                    no
    shared    shared     no      USER_PROJECT   no
    staff     staff      no      ADMIN_PROJECT  no
    hidden    hidden     no      nobody         no
    retired   retired    yes                    yes
    ========  =========  ======  =============  ========

    In flavorid order (a string sort): 1, 10, 2, 3, 4, 5, hidden, retired,
    shared, staff. m1.small has extra specs ``hw:cpu_policy=dedicated`` and
    ``evacuable=true``; ``shared`` has ``evacuable=false``. m1.big (10240
    MB, 4 vCPUs, 100 GB disk) has 10 GB ephemeral, 1024 MB swap,
    rxtx_factor 2.0 and a description; the others have none of those.
    """

    def start_fixture(self):
        ctxt = context.get_admin_context()
        flavor_obj.FlavorList.create_classic(ctxt)
        flavor_obj.Flavor.create(
            ctxt, 'm1.big', 10240, 4, 100, flavorid='10', ephemeral_gb=10,
            swap=1024, rxtx_factor=2.0, description='For big jobs')
        for flavorid, project in (('shared', USER_PROJECT),
                                  ('staff', ADMIN_PROJECT),
                                  ('hidden', None)):
            flavor_obj.Flavor.create(
                ctxt, flavorid, 256, 1, 1, flavorid=flavorid,
                is_public=False, projects=[project] if project else ())
        db_flavors.flavor_create(ctxt, {
            'flavorid': 'retired', 'name': 'retired', 'memory_mb': 128,
            'vcpus': 1, 'root_gb': 0, 'ephemeral_gb': 0, 'swap': 0,
            'rxtx_factor': 1.0, 'disabled': True, 'is_public': True})
        flavor_obj.Flavor.get_by_flavor_id(ctxt, '2').set_extra_specs(
            {'hw:cpu_policy': 'dedicated', 'evacuable': 'true'})
        flavor_obj.Flavor.get_by_flavor_id(ctxt, 'shared').set_extra_specs(
            {'evacuable': 'false'})

    def stop_fixture(self):
        pass


class ServiceHistoryFixture(fixture.GabbiFixture):
    """host1 forced down by a fault monitor, then disabled.

    Through the code the API runs; needs ComputeHostsFixture first.
    """

    def start_fixture(self):
        monitor = context.RequestContext(
            user_id='masakari', project_id=ADMIN_PROJECT, is_admin=True,
            roles=['admin'], overwrite=False)
        for changes in ({'forced_down': True},
                        {'disabled': True,
                         'disabled_reason': 'fenced by masakari'}):
            service_obj.Service.update_compute(monitor, changes,
                                               host='host1')

    def stop_fixture(self):
        pass


class InstanceActionsFixture(fixture.GabbiFixture):
    """Recorded actions of ServersFixture's web-2, with their events.

    =================  ======  ========  ========================  =======
    request id         action  created   event (host2)             result
    =================  ======  ========  ========================  =======
    req-web2-stop      stop    04:01     compute_stop_instance     Success
    req-web2-start     start   04:02     compute_start_instance    Error
    =================  ======  ========  ========================  =======

    The start failed: its message is ``Error``, its event has a traceback
    and details. Both were asked by web-2's owner (user-of-USER_PROJECT).
    """

    ACTIONS = (
        ('req-web2-stop', 'stop', 'compute_stop_instance', 'Success', 1),
        ('req-web2-start', 'start', 'compute_start_instance', 'Error', 2),
    )

    def start_fixture(self):
        actions = models.InstanceAction.__table__
        events = models.InstanceActionEvent.__table__
        with ServersFixture.engine().begin() as connection:
            for request_id, action, event, result, minute in self.ACTIONS:
                started = datetime.datetime(2026, 1, 2, 4, minute, 0)
                failed = result == 'Error'
                action_id = connection.execute(actions.insert().values(
                    action=action, instance_uuid=os.environ['WEB2_UUID'],
                    request_id=request_id, project_id=USER_PROJECT,
                    user_id='user-of-' + USER_PROJECT, start_time=started,
                    finish_time=started, created_at=started,
                    updated_at=started, message='Error' if failed else None,
                    deleted=0)).inserted_primary_key[0]
                connection.execute(events.insert().values(
                    action_id=action_id, event=event, host='host2',
                    start_time=started, finish_time=started, result=result,
                    traceback='Traceback: it broke' if failed else None,
                    details='it broke' if failed else None,
                    created_at=started, deleted=0))

    def stop_fixture(self):
        pass


class MigrationsFixture(fixture.GabbiFixture):
    """An evacuation of ServersFixture's db-1 from host3 to host1, done.

    Recorded at 05:00 by the admin, as an accepted evacuation and its
    destination's rebuild leave it (the source has not come back).
    """

    def start_fixture(self):
        started = datetime.datetime(2026, 1, 2, 5, 0, 0)
        with ServersFixture.engine().begin() as connection:
            connection.execute(models.Migration.__table__.insert().values(
                uuid='2b8a1ee4-6c7d-4b33-9e2c-3a1f4d5e6f70',
                instance_uuid=os.environ['DB1_UUID'],
                migration_type='evacuation', status='done',
                source_compute='host3', source_node='host_3.example.org',
                dest_compute='host1', dest_node='host1.example.org',
                user_id='admin', project_id=ADMIN_PROJECT, hidden=False,
                target_vm_state='active', created_at=started,
                updated_at=started, deleted=0))

    def stop_fixture(self):
        pass
