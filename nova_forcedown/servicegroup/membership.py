"""The tooz group of services: its members and a bounded read of them.

Every service that heartbeats to a coordination backend is a member of
one tooz group, GROUP_ID, with the member id ``<binary>:<host>``: the
agent on the tooz servicegroup driver and the pulse
(``nova-forcedown-pulse``) both join it, through
:class:`~nova_forcedown.servicegroup.backend_heartbeat.BackendHeartbeat`.
The backend forgets a member whose last heartbeat is older than the
membership timeout it joined with: service_down_time for the agent,
``[pulse] ttl`` for the pulse.

:class:`MembershipReader` says who is in the group now, without ever
making its caller wait long for a backend that does not answer. It
imports nothing of the database, so that the fault monitor, a client of
the compute API and not of this project's database, reads the pulses
with it too.

Only tooz's public group API is used (get_coordinator, heartbeat,
create_group, join_group, leave_group, get_members), so any backend URL
tooz supports works.
"""

from importlib import metadata
import threading
import time
import urllib.parse
import uuid

from oslo_config import cfg
from oslo_log import log as logging
from stevedore import exception as stevedore_exc
import tooz
from tooz import coordination

from nova_forcedown import background
from nova_forcedown import condition_log
from nova_forcedown.conf import coordination as coordination_conf
from nova_forcedown import exception

LOG = logging.getLogger(__name__)

GROUP_ID = b'nova-forcedown-services'

# Seconds a membership read serves every caller before it is read again:
# concurrent requests and listings share one read of the backend.
SNAPSHOT_MAX_AGE = 1.0
# Seconds a reader leaves an unreachable backend alone before it asks
# again.
RETRY_AFTER = 5.0
# Longest a caller waits for a read of the backend. tooz's clients retry
# for a long time (its Redis driver a minute on a refused connection):
# past this, the caller has no answer (None) while the read carries on for
# the next callers.
READ_TIMEOUT = 2.0

UNREACHABLE = condition_log.Messages(
    level=logging.WARNING,
    started='The coordination backend is unreachable (%(error)s); who '
            'heartbeats there is unknown until it is back.',
    reminder='The coordination backend is still unreachable after '
             '%(seconds)d s (%(error)s).',
    ended='Recovered: the coordination backend answers again, after '
          '%(seconds)d s.')

# Words in the names of the errors of tooz's clients that say the backend
# is out of reach. tooz wraps some of them (ToozConnectionError) but not
# all: a read on a Redis connection that broke raises redis'
# ConnectionError.
_OUTAGE_WORDS = ('Connection', 'Timeout')


def member_id(service):
    """The tooz member id of a service: anything with binary and host."""
    return host_member_id(service.host, service.binary)


def host_member_id(host, binary='nova-compute'):
    """The tooz member id of ``binary`` on ``host``: b'nova-compute:c1'."""
    return ('%s:%s' % (binary, host)).encode('utf-8')


def get_coordinator(url, member, membership_timeout):
    """A started tooz coordinator for ``member`` at ``url``.

    ``membership_timeout``: seconds after its last heartbeat at which the
    backend forgets ``member``. Unless the URL says otherwise, a driver
    that runs group calls on an executor runs them in the calling thread,
    so an agent of many hosts starts no thread per host.
    """
    coordinator = _coordinator(url, member, membership_timeout)
    coordinator.start()
    return coordinator


def _coordinator(url, member, membership_timeout):
    given = urllib.parse.parse_qs(urllib.parse.urlsplit(url).query)
    options = {'membership_timeout': membership_timeout}
    if 'executor' not in given:
        options['executor'] = 'synchronous'
    return coordination.get_coordinator(url, member, **options)


def unusable_backend(url):
    """Why tooz cannot use the backend ``url``, in one line; None if it can.

    Says what is wrong with the URL itself (a scheme tooz does not know,
    a driver whose library is not installed, an option it refuses)
    without connecting, so a command can refuse it at start.
    """
    try:
        _coordinator(url, b'nova-forcedown-check', 1)
    except stevedore_exc.NoMatches:
        scheme = urllib.parse.urlsplit(url).scheme
        return ('tooz has no backend "%s" (it knows %s)' % (
            scheme, ', '.join(_known_schemes())) if scheme else
            'it has no scheme, such as redis://')
    except ImportError as exc:
        return 'its tooz driver cannot be loaded: %s' % (
            exception.first_line(exc))
    except Exception as exc:  # noqa: whatever the driver refuses
        return exception.first_line(exc)
    return None


def check_backend_url(url):
    """cfg.Error naming the option if tooz cannot use the backend ``url``."""
    problem = unusable_backend(url)
    if problem is not None:
        raise cfg.Error('[coordination] backend_url %s is not valid: %s' % (
            coordination_conf.shown_url(url) or '(empty)', problem))


def answers(conf):
    """Whether the backend answers a read within READ_TIMEOUT.

    The reader logs why not, in one line.
    """
    reader = MembershipReader(conf)
    try:
        return reader.members() is not None
    finally:
        reader.stop()


def _known_schemes():
    return sorted({entry_point.name for entry_point in
                   metadata.entry_points(group='tooz.backends')})


class MembershipReader:
    """Member ids the backend holds alive, read within a bounded time.

    One read at a time runs, in a thread of its own; its answer serves
    every caller for SNAPSHOT_MAX_AGE (less for a caller that reads
    often: ``reads_every``), RETRY_AFTER after a failure. An outage is
    said once when it starts (``unreachable``, a condition_log.Messages)
    and once when it ends, whatever the number of reads.
    """

    def __init__(self, conf, backend_url=None, reads_every=None,
                 clock=time.monotonic, unreachable=UNREACHABLE):
        """``backend_url``: by default ``[coordination] backend_url``.

        ``reads_every``: seconds between the caller's reads; a caller
        reading every few tenths of a second (the monitor) gets a fresh
        read each time, whereas one read a second serves the API.
        """
        self._url = backend_url or conf.coordination.backend_url
        self._membership_timeout = conf.service_down_time
        self._clock = clock
        self._snapshot_max_age = (SNAPSHOT_MAX_AGE if reads_every is None
                                  else min(SNAPSHOT_MAX_AGE, reads_every / 2))
        self._lock = threading.Lock()
        self._observer = None
        self._stopped = False
        self._members = None
        self._read_at = None
        self._pending = None
        self._unreachable = condition_log.ConditionLog(
            LOG, unreachable, conf.log_reminder_interval, clock)

    def members(self):
        """A frozenset of the member ids (bytes) alive now; None if unknown.

        Unknown while the backend is unreachable, once stopped, and while
        a read takes longer than READ_TIMEOUT: a caller never waits longer
        for the backend. An empty frozenset: nobody has joined yet.
        """
        with self._lock:
            if self._stopped:
                return None
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

    def stop(self):
        """Let go of the backend; members() says None from now on.

        Waits READ_TIMEOUT at most for the backend to close the
        connection; a read under way closes its own when it ends.
        """
        with self._lock:
            self._stopped = True
            observer, self._observer = self._observer, None
        if observer is not None:
            background.Call(observer.stop, 'backend-reader-stop').wait(
                READ_TIMEOUT)

    def _read_and_keep(self):
        members = self._read_members()
        with self._lock:
            self._members, self._read_at = members, self._clock()
            self._pending = None
        return members

    def _read_members(self):
        try:
            observer = self._observer_of_backend()
            if observer is None:
                return None
            members = frozenset(observer.get_members(GROUP_ID).get())
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
        self._unreachable.update(['backend'], **said(failure))
        return None

    def _observer_of_backend(self):
        """The reader's own coordinator (it never joins); None if stopped."""
        with self._lock:
            if self._observer is not None or self._stopped:
                return self._observer
        observer = get_coordinator(
            self._url, b'nova-forcedown-reader-' +
            uuid.uuid4().hex.encode('ascii'), self._membership_timeout)
        with self._lock:
            if not self._stopped:
                self._observer = observer
                return observer
        observer.stop()
        return None


def said(failure):
    """How a failure of the backend is logged: one line for an outage.

    Any other error (a bug, a refusal) shows its traceback too, once, when
    the condition starts. The keyword arguments of ConditionLog.update.
    """
    error = '%s: %s' % (type(failure).__name__,
                        exception.first_line(failure))
    return {'error': error,
            'exc_info': None if is_outage(failure) else failure}


def is_outage(failure):
    """Whether ``failure`` says the backend is out of reach."""
    if isinstance(failure, (tooz.ToozError, OSError)):
        return True
    return any(word in cls.__name__ for cls in type(failure).__mro__
               for word in _OUTAGE_WORDS)
