"""tooz servicegroup driver: heartbeats go to a coordination backend.

Every service is a member of one tooz group, with the member id
``<binary>:<host>``; the backend forgets a member that has not heartbeaten
for ``membership_timeout``, which the driver sets to service_down_time. So
a service is up when the backend lists it, or when its database heartbeat
(``services.last_seen_up``) is younger than service_down_time: the agent
still writes that one, at a low rate (``[coordination]
database_report_interval``). The database keeps ``forced_down`` and stays
the judge while the backend is unreachable, has just restarted empty, or
has not yet seen an agent still on the db driver; so no host looks down
for want of the backend, and none looks up longer than service_down_time
after its last heartbeat of either kind.

Only tooz's public group API is used (get_coordinator, heartbeat,
create_group, join_group, get_members), so any backend URL tooz supports
works.
"""

import functools
import threading
import time
import urllib.parse
import uuid

from oslo_log import log as logging
import tooz
from tooz import coordination

from nova_forcedown import background
from nova_forcedown import condition_log
from nova_forcedown.conf import coordination as coordination_conf
from nova_forcedown import exception
from nova_forcedown import periodic
from nova_forcedown.servicegroup.drivers import base
from nova_forcedown.servicegroup.drivers import db
from nova_forcedown.servicegroup import heartbeat

LOG = logging.getLogger(__name__)

GROUP_ID = b'nova-forcedown-services'

# Seconds a membership read serves every request before it is read again:
# concurrent requests and listings share one read of the backend.
SNAPSHOT_MAX_AGE = 1.0
# Seconds the API leaves an unreachable backend alone before it asks
# again; meanwhile liveness follows the database heartbeats.
RETRY_AFTER = 5.0
# Longest a request waits for a read of the backend. tooz's clients retry
# for a long time (its Redis driver a minute on a refused connection):
# past this, the request judges from the database heartbeats while the
# read carries on for the next requests.
READ_TIMEOUT = 2.0

BACKEND_DOWN = condition_log.Messages(
    level=logging.WARNING,
    started='The coordination backend is unreachable (%(error)s); '
            'liveness follows the database heartbeats until it is back.',
    reminder='The coordination backend is still unreachable after '
             '%(seconds)d s (%(error)s).',
    ended='Recovered: the coordination backend answers again, after '
          '%(seconds)d s.')

# Words in the names of the errors of tooz's clients that say the backend
# is out of reach. tooz wraps some of them (ToozConnectionError) but not
# all: a read on a Redis connection that broke raises redis'
# ConnectionError.
_OUTAGE_WORDS = ('Connection', 'Timeout')

HEARTBEATS_DOWN = condition_log.Messages(
    level=logging.WARNING,
    started='Heartbeats to the coordination backend failed (%(error)s); '
            'retrying every %(interval)s s, and heartbeating to the '
            'database meanwhile.',
    reminder='Heartbeats to the coordination backend still fail after '
             '%(seconds)d s (%(error)s).',
    ended='Recovered: heartbeats reach the coordination backend again, '
          'after %(seconds)d s.')


def member_id(service):
    """The tooz member id of a service (object or listing row)."""
    return ('%s:%s' % (service.binary, service.host)).encode('utf-8')


def get_coordinator(conf, member):
    """A started tooz coordinator for ``member`` on the configured backend.

    ``membership_timeout`` is service_down_time. Unless the URL says
    otherwise, a driver that runs group calls on an executor runs them in
    the calling thread, so an agent of many hosts starts no thread per
    host.
    """
    url = conf.coordination.backend_url
    given = urllib.parse.parse_qs(urllib.parse.urlsplit(url).query)
    options = {'membership_timeout': conf.service_down_time}
    if 'executor' not in given:
        options['executor'] = 'synchronous'
    coordinator = coordination.get_coordinator(url, member, **options)
    coordinator.start()
    return coordinator


class ToozDriver(base.Driver):

    def __init__(self, conf, clock=time.monotonic, reads_every=None):
        self._conf = conf
        self._clock = clock
        # A caller reading every few tenths of a second (the monitor) gets
        # a fresh read each time; one read a second serves the API.
        self._snapshot_max_age = (SNAPSHOT_MAX_AGE if reads_every is None
                                  else min(SNAPSHOT_MAX_AGE, reads_every / 2))
        self._database = db.DbDriver(conf)
        self._lock = threading.Lock()
        self._observer = None
        self._members = None
        self._read_at = None
        self._pending = None
        self._unreachable = condition_log.ConditionLog(
            LOG, BACKEND_DOWN, conf.log_reminder_interval, clock)

    def join(self, *services, along=None, alive=None):
        """Heartbeat ``services`` to the backend and, rarely, the database.

        Two threads whatever the number of services: one heartbeats every
        service to the backend every report_interval, the other writes
        their database heartbeats every database_report_interval (and
        learns and logs their forced_down). Neither waits for the other,
        so an outage of one store leaves the other's heartbeats running.
        ``along`` rides on the database heartbeats.
        """
        conf = self._conf
        beats = BackendHeartbeat(conf, services, alive=alive).start()
        database = heartbeat.Heartbeat(
            functools.partial(db.DbDriver.report_states, along=along),
            services,
            coordination_conf.database_report_interval(conf),
            conf.log_reminder_interval, alive=alive).start()
        return Handle(beats, database)

    def is_up(self, service):
        return self.liveness()(service)

    def liveness(self):
        """An is_up of services that reads the backend at most once.

        It is read when the first service that is not forced down is
        judged, and only if the last read is older than SNAPSHOT_MAX_AGE
        (less for a caller that reads often: ``reads_every``).
        """
        members = []

        def is_up(service):
            if service.forced_down:
                return False
            if not members:
                members.append(self.members())
            if members[0] is not None and member_id(service) in members[0]:
                return True
            return self._database.is_up(service)
        return is_up

    def blind_spot(self):
        if self.members() is None:
            return 'the coordination backend cannot be read'
        return None

    def get_updated_time(self, service):
        """When the database last heard of the service (a low rate here)."""
        return service.updated_at

    def members(self):
        """Member ids the backend holds alive; None when unknown.

        Unknown while the backend is unreachable, and while a read takes
        longer than READ_TIMEOUT: a request never waits longer for the
        backend. One read at a time runs, in a thread of its own, and its
        answer serves every request for SNAPSHOT_MAX_AGE (RETRY_AFTER
        after a failure).
        """
        with self._lock:
            now = self._clock()
            max_age = (self._snapshot_max_age if self._members is not None
                       else RETRY_AFTER)
            if self._read_at is not None and now - self._read_at < max_age:
                return self._members
            if self._pending is None:
                self._pending = background.Call(
                    self._read_and_keep, 'backend-read', self._clock)
            pending = self._pending
        if not pending.wait(READ_TIMEOUT - (now - pending.started_at)):
            return None
        return pending.result()

    def _read_and_keep(self):
        members = self._read_members()
        with self._lock:
            self._members, self._read_at = members, self._clock()
            self._pending = None
        return members

    def _read_members(self):
        try:
            if self._observer is None:
                self._observer = get_coordinator(
                    self._conf, b'nova-forcedown-api-' +
                    uuid.uuid4().hex.encode('ascii'))
            members = frozenset(self._observer.get_members(GROUP_ID).get())
        except coordination.GroupNotCreated:
            members = frozenset()
        except Exception as exc:  # noqa: any failure leaves it unknown
            failure = exc
            members = None
        if members is not None:
            self._unreachable.update([])
            return members
        # Logged out of the except block: oslo.log would otherwise append
        # the traceback, repeating what the line says.
        self._unreachable.update(['backend'], **_said(failure))
        return None


class BackendHeartbeat(periodic.Ticker):
    """One thread that heartbeats many members to the backend.

    Each service has its own coordinator (one backend connection, no
    thread): tooz keeps one heartbeat per member. Every tick sends each
    one heartbeat. Every member joins the group (creating it when missing)
    at start, after a failed tick, and after a tick that came later than
    service_down_time (readers may have removed its members meanwhile);
    every database_report_interval each member checks that it is still
    there, and joins again if not, so a backend that restarted empty
    learns them again.

    The check reads: a join writes the group even when the member is in
    it, and every write of the group makes tooz's Redis driver start its
    readers' membership read again. Members joining again and again every
    few seconds (thousands of hosts) left listings no read that finished.
    """

    def __init__(self, conf, services, clock=time.monotonic, alive=None):
        super().__init__(conf.report_interval, 'backend-heartbeat')
        self._conf = conf
        self._services = list(services)
        self._alive = alive
        self._check_every = max(1, round(
            coordination_conf.database_report_interval(conf) /
            conf.report_interval))
        self._clock = clock
        self._coordinators = {}
        self._ticks = 0
        self._last_tick_at = None
        self._must_join = True
        self._beating = None
        self._progress_at = None
        self._shown_url = coordination_conf.shown_url(
            conf.coordination.backend_url)
        self._failing = condition_log.ConditionLog(
            LOG, HEARTBEATS_DOWN, conf.log_reminder_interval, clock)

    def tick(self):
        """Heartbeat every member once; returns True when all succeeded.

        The members' heartbeats run in a thread of the tick's own, so that
        a backend that does not answer is said within an interval: tooz's
        clients retry inside one call (its Redis driver for about a minute
        on a refused connection). Heartbeats that made no progress for an
        interval are logged as failing, and the next tick waits for them
        rather than sending more.
        """
        if self._beating is None:
            self._progressed()
            self._beating = background.Call(self._beat, 'backend-beat')
        while not self._beating.wait(
                self._progress_at + self._interval - time.monotonic()):
            if time.monotonic() - self._progress_at >= self._interval:
                self._failing.update(['backend'], interval=self._interval,
                                     error='no answer from %s for %s s' % (
                                         self._shown_url, self._interval))
                return False
        beating, self._beating = self._beating, None
        try:
            beating.result()
        except Exception as exc:  # noqa: said once, retried next tick
            failure = exc
        else:
            self._failing.update([])
            return True
        self._must_join = True
        self._failing.update(['backend'], interval=self._interval,
                             **_said(failure))
        return False

    def _progressed(self):
        self._progress_at = time.monotonic()

    def _beat(self):
        now = self._clock()
        join = self._must_join or self._came_late(now)
        check = not join and self._ticks % self._check_every == 0
        for service in heartbeat.reporting(self._services, self._alive):
            member = member_id(service)
            coordinator = self._coordinator(member)
            coordinator.heartbeat()
            if join or (check and not _is_member(coordinator, member)):
                _join(coordinator)
            self._progressed()
        self._must_join = False
        self._last_tick_at = now
        self._ticks += 1

    def _came_late(self, now):
        """Whether the members' heartbeats may have expired since the last."""
        return (self._last_tick_at is not None and
                now - self._last_tick_at > self._conf.service_down_time)

    def _coordinator(self, member):
        coordinator = self._coordinators.get(member)
        if coordinator is None:
            coordinator = get_coordinator(self._conf, member)
            self._coordinators[member] = coordinator
        return coordinator


def _said(failure):
    """How a failure of the backend is logged: one line for an outage.

    Any other error (a bug, a refusal) shows its traceback too, once, when
    the condition starts.
    """
    error = '%s: %s' % (type(failure).__name__,
                        exception.first_line(failure))
    return {'error': error,
            'exc_info': None if _is_outage(failure) else failure}


def _is_outage(failure):
    if isinstance(failure, (tooz.ToozError, OSError)):
        return True
    return any(word in cls.__name__ for cls in type(failure).__mro__
               for word in _OUTAGE_WORDS)


def _is_member(coordinator, member):
    """Whether ``member`` is in the group: a read, unlike a join."""
    try:
        coordinator.get_member_capabilities(GROUP_ID, member).get()
    except (coordination.MemberNotJoined, coordination.GroupNotCreated):
        return False
    return True


def _join(coordinator):
    """Join the group, creating it when missing; already in is fine."""
    try:
        coordinator.join_group(GROUP_ID).get()
    except coordination.MemberAlreadyExist:
        pass
    except coordination.GroupNotCreated:
        try:
            coordinator.create_group(GROUP_ID).get()
        except coordination.GroupAlreadyExist:
            pass
        _join(coordinator)


class Handle:
    """Stops the backend and database heartbeat loops together."""

    def __init__(self, *loops):
        self._loops = loops

    def stop(self, timeout=None):
        for loop in self._loops:
            loop.stop(timeout)
