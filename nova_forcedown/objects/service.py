"""Service: one running binary (nova-compute, nova-scheduler...) on a host."""

import collections
import contextlib
import functools

from oslo_utils import uuidutils
from oslo_utils import versionutils
from oslo_versionedobjects import base as ovo_base
from oslo_versionedobjects import fields

from nova_forcedown.db import engine as db_engine
from nova_forcedown.db import migrations as db_migrations
from nova_forcedown.db import models
from nova_forcedown.db import service_history as db_history
from nova_forcedown.db import services as db_services
from nova_forcedown import exception
from nova_forcedown import notifications
from nova_forcedown.objects import host_zones
from nova_forcedown.objects import base
from nova_forcedown.objects import fence_storm
from nova_forcedown.objects import host_operations

COMPUTE_BINARY = models.COMPUTE_BINARY

# Binaries that never heartbeat and so are hidden from service listings.
API_BINARIES = ('nova-osapi_compute', 'nova-metadata')

# Fields whose change an admin makes; a heartbeat never writes them. A
# history entry shows them in this order.
ADMIN_FIELDS = ('disabled', 'disabled_reason', 'forced_down')

# The field that is no column: a compute service's zone comes from the
# aggregates of its host. It is set for notifications only.
ZONE_FIELD = 'availability_zone'


class Unchanged(collections.namedtuple('Unchanged', ('tags', 'tag_of'))):
    """A change's precondition: the service is still as its client read it.

    ``tags``: the entity tags its client read (quoted, as it sent them in
    ``If-Match``); the service's must be one of them. ``tag_of(context,
    row)``: the entity tag of a service row read in ``context``'s
    transaction, as a client sees it now (the API hands down the
    servicegroup's ``entity_tag.stored_tag``).
    """

    def check(self, context, row):
        """ServiceChanged unless ``row`` (locked) is as the client read it."""
        if self.tag_of(context, row) not in self.tags:
            raise exception.ServiceChanged(service_id=row.uuid,
                                           tags=' or '.join(self.tags))


@base.ObjectRegistry.register
class Service(base.NovaForcedownObject, ovo_base.VersionedObjectDictCompat):
    # Version 1.0: Initial version, before mark-host-down
    # Version 1.1: Added forced_down
    # Version 1.2: Added rpc_server
    VERSION = '1.2'

    fields = {
        'id': fields.IntegerField(read_only=True),
        'uuid': fields.UUIDField(nullable=True),
        'host': fields.StringField(),
        'binary': fields.StringField(),
        'topic': fields.StringField(nullable=True),
        'report_count': fields.IntegerField(),
        'disabled': fields.BooleanField(),
        'disabled_reason': fields.StringField(nullable=True),
        'last_seen_up': fields.DateTimeField(nullable=True),
        'forced_down': fields.BooleanField(),
        'version': fields.IntegerField(),
        'rpc_server': fields.StringField(nullable=True),
        'availability_zone': fields.StringField(nullable=True),  # not stored
        'created_at': fields.DateTimeField(nullable=True),
        'updated_at': fields.DateTimeField(nullable=True),
        'deleted_at': fields.DateTimeField(nullable=True),
        'deleted': fields.BooleanField(default=False),
    }

    def obj_make_compatible(self, primitive, target_version):
        super().obj_make_compatible(primitive, target_version)
        if versionutils.convert_version_to_tuple(target_version) < (1, 1):
            primitive.pop('forced_down', None)
        if versionutils.convert_version_to_tuple(target_version) < (1, 2):
            primitive.pop('rpc_server', None)

    @staticmethod
    def _from_db_object(context, service, db_service):
        for field in service.fields:
            if field == ZONE_FIELD:
                continue
            value = getattr(db_service, field)
            if field == 'deleted':
                value = bool(value)
            setattr(service, field, value)
        service._context = context
        service.obj_reset_changes()
        return service

    @property
    def is_compute(self):
        return self.binary == COMPUTE_BINARY

    @classmethod
    def get_by_id(cls, context, service_id):
        return cls._from_db_object(
            context, cls(), db_services.service_get(context, service_id))

    @classmethod
    def get_by_uuid(cls, context, service_uuid):
        return cls._from_db_object(
            context, cls(),
            db_services.service_get_by_uuid(context, service_uuid))

    @classmethod
    def get_by_host_and_binary(cls, context, host, binary):
        return cls._from_db_object(
            context, cls(),
            db_services.service_get_by_host_and_binary(context, host, binary))

    def create(self):
        values = self.obj_get_changes()
        values.pop(ZONE_FIELD, None)
        values.setdefault('uuid', uuidutils.generate_uuid())
        db_service = db_services.service_create(self._context, values)
        self._from_db_object(self._context, self, db_service)
        self._notify('create')

    def save(self):
        """Write the changed fields, and only those, in one UPDATE.

        A stale object therefore never undoes an admin's forced_down or
        disabled written since it was loaded.

        ``service.update`` is notified, once the UPDATE is committed, when
        the changes include an admin field, even one set to its old value.
        """
        changes = self.obj_get_changes()
        changes.pop('id', None)
        changes.pop(ZONE_FIELD, None)
        if not changes:
            return
        written = db_services.service_update(self._context, self.id, changes)
        for field, value in written.items():
            setattr(self, field, value)
        self.obj_reset_changes()
        self._notify_update(changes)

    @classmethod
    def get_compute_by_uuid(cls, context, service_uuid):
        """The service ``service_uuid``; ServiceNotCompute unless compute."""
        service = cls.get_by_uuid(context, service_uuid)
        if not service.is_compute:
            raise exception.ServiceNotCompute(binary=service.binary)
        return service

    @classmethod
    def update_compute(cls, context, changes, uuid=None, host=None,
                       conf=None, mark_shutdown=None, unchanged=None):
        """Write ``changes`` to a compute service, and record them.

        The live nova-compute service with ``uuid``, or on ``host``, as
        :func:`change_compute` changes it with the fence-storm guard and
        the side effects ``conf`` sets (``mark_shutdown``, unless None,
        decides the one of a force-down), on the condition ``unchanged``
        (an :class:`Unchanged`) if given. Returns it as now stored.
        Notifies ``service.update`` as save() does, and
        ``instance.power_off.end`` for each server marked shut down.

        Only when no such service is found is the database asked why:
        ServiceNotFound or ServiceNotCompute for a ``uuid``; HostNotFound
        for a host without any service, else HostBinaryNotFound.
        """
        row, marked = change_compute(
            context, changes, uuid=uuid, host=host,
            limit=fence_storm.FencingLimit.from_conf(conf),
            mark_shutdown=(marks_shutdown(conf, changes)
                           if mark_shutdown is None else mark_shutdown),
            unchanged=unchanged)
        if row is None:
            raise cls._why_no_compute(context, uuid, host)
        host_operations.notify_marked(context, marked)
        service = cls._from_db_object(context, cls(), row)
        service._notify_update(changes)
        return service

    @staticmethod
    def host_exists(context, host):
        """Whether any live service runs on ``host``."""
        return db_services.service_host_exists(context, host)

    @classmethod
    def _why_no_compute(cls, context, uuid, host):
        if uuid is not None:
            cls.get_compute_by_uuid(context, uuid)
            # It was deleted since the UPDATE.
            return exception.ServiceNotFound(service_id=uuid)
        if not db_services.service_host_exists(context, host):
            return exception.HostNotFound(host=host)
        return exception.HostBinaryNotFound(host=host, binary=COMPUTE_BINARY)

    def _notify_update(self, changes):
        """``service.update``, when ``changes`` hold an admin field."""
        if set(changes).intersection(ADMIN_FIELDS):
            self._notify('update')

    def _notify(self, action):
        """``service.<action>``, with the zone of the service's host.

        The zone costs a query, made only when notifications are sent.
        """
        if notifications.enabled():
            self.availability_zone = (
                host_zones.zones_by_host(
                    self._context, [self.host]).get(self.host)
                if self.is_compute else None)
            self.obj_reset_changes([ZONE_FIELD])
        notifications.service_changed(self._context, self, action)

    def record_heartbeat(self):
        """Bump report_count and last_seen_up in the database, nothing else.

        The admin flags come back with it, so the object shows the stored
        forced_down and disabled afterwards.
        """
        self._take_heartbeat(
            db_services.service_report_state(self._context, self.id))

    def _take_heartbeat(self, stored):
        for field, value in stored.items():
            setattr(self, field, value)
        self.obj_reset_changes(list(stored))

    def destroy(self, conf=None):
        """Soft-delete the service (and a compute's nodes), as Nova does.

        A compute service is refused while its host has servers or
        migrations in progress; with ``conf`` whose ``[fencing]
        max_forced_down_fraction`` is set, also when the fence-storm guard
        refuses it (the share of its zone's compute hosts forced down
        would pass that fraction, and grow): ZoneChangeLimitExceeded.
        """
        destroy_service(self._context, self.id,
                        limit=fence_storm.FencingLimit.from_conf(conf))
        self._notify('delete')


@db_engine.writer
def destroy_service(context, service_id, limit=None):
    """Delete the service ``service_id`` and what goes with it, or refuse.

    One transaction: the service read, Nova's refusal of a compute host
    that is not empty, the fence-storm guard (``limit``, a FencingLimit)
    on its zones, the deletion.
    """
    service = db_services.service_get(context, service_id)
    if service.binary == COMPUTE_BINARY:
        _refuse_busy_host(context, service.host)
        if limit is not None:
            fence_storm.lock_checked(
                context, limit, fence_storm.Delta(deleted=service.host),
                functools.partial(
                    exception.ZoneChangeLimitExceeded,
                    change='Deleting the compute service of host %s'
                    % service.host))
    db_services.service_soft_delete(context, service)


def _refuse_busy_host(context, host):
    """Nova's refusals of deleting the compute service of ``host``."""
    if db_services.service_has_instances(context, host):
        raise exception.ServiceHostsInstances()
    if db_migrations.host_has_migrations_in_progress(context, host):
        raise exception.ServiceHasMigrationsInProgress()


def marks_shutdown(conf, changes):
    """Whether ``changes`` also mark the host's servers powered off.

    A force-down does with ``[DEFAULT] force_down_marks_instances_shutdown``
    (see :mod:`.host_operations`).
    """
    return bool(conf is not None and changes.get('forced_down') and
                conf.force_down_marks_instances_shutdown)


@db_engine.writer
def change_compute(context, changes, uuid=None, host=None, limit=None,
                   mark_shutdown=False, unchanged=None):
    """An admin's change of a compute service, in one transaction.

    The service ``uuid`` or on ``host`` is locked (with its zones' when
    ``limit``, a FencingLimit, guards a force-down: ForcedDownLimitExceeded
    over it), checked (with ``unchanged``, an :class:`Unchanged`, the
    locked row must be as its client read it, else ServiceChanged; a
    force-up while evacuations away from the host are open is refused),
    changed, and the change recorded in its history;
    with ``mark_shutdown``, a host now forced down has every server
    marked powered off in the same transaction. Returns (the row as now
    stored, or None when there is no such service; [host_operations
    changes] of the servers marked, not yet notified). A change that
    changes nothing is written (updated_at) but not recorded.
    """
    forcing_down = changes.get('forced_down') is True
    old = _lock_compute(context, uuid, host,
                        limit if forcing_down else None)
    if old is None:
        return None, []
    if unchanged is not None:
        unchanged.check(context, old)
    if changes.get('forced_down') is False:
        _refuse_force_up_with_evacuations_left(context, old.host)
    new = db_services.service_write_admin(context, old, changes)
    changed = [db_history.Change(field, getattr(old, field), changes[field])
               for field in ADMIN_FIELDS
               if field in changes and getattr(old, field) != changes[field]]
    # A change asked again (a fence agent's retry) is no new history.
    if changed:
        db_history.history_record(
            context, old.host, event_of(changed, new.disabled), changed,
            service_uuid=old.uuid, now=new.updated_at)
    marked = []
    if mark_shutdown and new.forced_down:
        marked = host_operations.mark_servers_shutdown(context, new.host)
    return new, marked


def _lock_compute(context, uuid, host, limit):
    """The compute service ``uuid`` or on ``host``, locked; or None.

    With ``limit``, it is to be forced down: the compute services of its
    host's zones are locked first, and ForcedDownLimitExceeded raised when
    the fence-storm guard refuses it.
    """
    if limit is None:
        return db_services.service_lock_compute(context, uuid=uuid,
                                                host=host)
    found = db_services.service_find_compute(context, uuid=uuid, host=host)
    if found is None:
        return None
    locked = fence_storm.lock_checked(
        context, limit, fence_storm.Delta(forced_down=found.host),
        functools.partial(exception.ForcedDownLimitExceeded,
                          host=found.host))
    if found.id not in locked:
        return None  # Deleted since it was found.
    return db_services.service_lock_compute(context, uuid=uuid, host=host,
                                            service_id=found.id)


def event_of(changed, disabled):
    """What a history entry calls ``changed`` (db_history.Change rows).

    Only what changed is named: a request that also restates a status the
    service already has does not name it. A new reason for a service that
    stays disabled is a ``disable``.
    """
    new = {change.field: change.new for change in changed}
    events = []
    if 'disabled' in new or ('disabled_reason' in new and disabled):
        events.append('disable' if disabled else 'enable')
    if 'forced_down' in new:
        events.append('force-down' if new['forced_down']
                      else 'clear-force-down')
    return ','.join(events) or 'update'


def _refuse_force_up_with_evacuations_left(context, host):
    """Refuse to force ``host`` up while it may still run evacuated servers.

    That is while an evacuation away from it is open: its agent has not
    come back to remove what left it and complete the migration. Only
    ``done`` ones: Nova's refusal, word for word; any still ``accepted``
    or ``pre-migrating`` (the destination has not rebuilt yet): a 409
    naming them, as Nova does not guard that.
    """
    counts = db_migrations.open_evacuation_counts(context, host)
    if not counts:
        return
    if set(counts) == {db_migrations.DONE}:
        raise exception.ForceUpWithEvacuationsLeft(host=host)
    raise exception.ForceUpWithEvacuationsInProgress(
        host=host, count=sum(counts.values()),
        states=', '.join('%d %s' % (counts[status], status)
                         for status in db_migrations.OPEN
                         if status in counts))


@base.ObjectRegistry.register
class ServiceList(base.ObjectListBase, base.NovaForcedownObject):
    # Version 1.0: Initial version
    VERSION = '1.0'

    fields = {
        'objects': fields.ListOfObjectsField('Service'),
    }

    @classmethod
    def get_all(cls, context, host=None, binary=None, include_api=True):
        """Services, filtered by exact host and binary in SQL."""
        with cls.reading_records(context, host=host, binary=binary,
                                 include_api=include_api) as rows:
            return base.list_from_db(cls, Service, context, rows)

    @staticmethod
    def record_heartbeats(services, along=None):
        """Heartbeat of each of ``services``, one UPDATE per chunk of them.

        What record_heartbeat does for one service, for an agent of many
        hosts, in the context of the first. Returns the services whose rows
        are gone (deleted). ``along(context)`` runs in the same transaction
        and what it returns, unless None, after it committed.
        """
        if not services:
            return []
        stored, then = _heartbeats_along(
            services[0]._context, [service.id for service in services],
            along)
        gone = []
        for service in services:
            if service.id in stored:
                service._take_heartbeat(stored[service.id])
            else:
                gone.append(service)
        if then is not None:
            then()
        return gone

    @classmethod
    def get_records(cls, context, host=None, binary=None, include_api=True,
                    hosts=None):
        """What get_all returns, as read-only records (db.services.ServiceRow).

        For listings of thousands: no versioned object is built per row.
        ``hosts``, when given, keeps the services of those hosts only.
        """
        with cls.reading_records(context, host=host, binary=binary,
                                 include_api=include_api,
                                 hosts=hosts) as records:
            return list(records)

    @staticmethod
    def get_records_of_host(context, host, binary=None, include_api=True):
        """(:meth:`get_records` of ``host``, the zones ``host`` is in).

        One statement; the zones are names, as aggregates give them.
        """
        with db_engine.reading(context):
            return db_services.host_service_rows(
                context, host, binary=binary,
                exclude_binaries=() if include_api else API_BINARIES)

    @staticmethod
    @contextlib.contextmanager
    def reading_records(context, host=None, binary=None, include_api=True,
                        hosts=None):
        """:meth:`get_records`' records, as the cursor reads them.

        ``with ServiceList.reading_records(context) as records:`` iterates
        over them, each built as its row is read, in a read transaction
        open for the body of the ``with`` statement: a listing rendered
        there never holds its services all at once.
        """
        with db_engine.reading(context):
            yield db_services.service_list_rows(
                context, host=host, binary=binary,
                exclude_binaries=() if include_api else API_BINARIES,
                hosts=hosts)


@db_engine.writer(writes_first=True)
def _heartbeats_along(context, service_ids, along):
    """The heartbeats' stored values, and what ``along`` returned.

    The heartbeats' UPDATE comes first: it takes the write lock, and what
    ``along`` reads after it is current.
    """
    stored = db_services.service_report_states(context, service_ids)
    return stored, along(context) if along is not None else None
