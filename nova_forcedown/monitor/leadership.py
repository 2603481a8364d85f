"""One monitor acts, however many run: the holder of a tooz lock.

Every monitor tries the lock at each look; the one holding it leads and
renews it, the others stand by. A leader that dies stops renewing: on
Redis its lock expires after ``[monitor] leader_timeout`` seconds and the
next monitor to try takes it; a file lock goes with its process at once.
A leader that cannot renew its lock (its backend away, or the lock taken
over after a pause) stops acting at once: two monitors never act
together. A backend away when the monitor starts is tried again at each
look, the monitor standing by meanwhile.

A look may take seconds (BMCs, the compute API), and a monitor may be
paused or cut off in the middle of one: before each write it makes
(a fence, a force-down, a batch of evacuations, a reserved host enabled)
it asks :meth:`Leadership.still_leads`, which renews the lock at that
moment and trusts it for less than the lock's lifetime.
"""

import functools
import logging as std_logging
import os
import socket
import threading
import time
import urllib.parse

from oslo_log import log as logging
from tooz import coordination

from nova_forcedown import background
from nova_forcedown import condition_log
from nova_forcedown.conf import coordination as coordination_conf
from nova_forcedown import exception

LOG = logging.getLogger(__name__)

LOCK_NAME = b'nova-forcedown-monitor-leader'
# Longest a look waits for the backend to answer a connection.
CONNECT_PATIENCE = 2.0
# Longest a write waits for the lock to be renewed before it: past this
# the monitor no longer knows that it leads.
RENEW_PATIENCE = 1.0


class _WithoutTraceback(std_logging.Filter):
    """Keep a log line, drop the traceback tooz attaches to it.

    tooz's heartbeat thread logs every lock it fails to renew (Redis
    restarted, the lock expired) with a traceback, every second until the
    lock is released; the monitor says once what it means.
    """

    def filter(self, record):
        record.exc_info = record.exc_text = None
        return True


# tooz's drivers that renew locks from the coordinator's heartbeat.
_TOOZ_LOCK_LOGGERS = ('tooz.drivers.redis', 'tooz.coordination')
# One filter for the process: a logger keeps a filter once however often
# it is added, so starting again adds nothing.
_WITHOUT_TRACEBACK = _WithoutTraceback()

LOCK_UNREACHABLE = condition_log.Messages(
    level=logging.WARNING,
    started='Cannot reach the leader lock at %(url)s (%(error)s); standing '
            'by, trying again at each look.',
    reminder='Still cannot reach the leader lock at %(url)s after '
             '%(seconds)d s (%(error)s).',
    ended='Reached the leader lock at %(url)s, after %(seconds)d s.')


def lock_url(conf):
    """The tooz URL of the leader's lock (see [monitor] coordination_url)."""
    url = conf.monitor.coordination_url
    if url is None and (conf.monitor.pulse or
                        conf.servicegroup_driver == 'tooz'):
        url = conf.coordination.backend_url
    if url is None:
        return 'file://' + os.path.join(conf.state_path, 'monitor-locks')
    parts = urllib.parse.urlsplit(url)
    query = urllib.parse.parse_qs(parts.query)
    if parts.scheme.startswith('redis') and 'lock_timeout' not in query:
        query['lock_timeout'] = [str(conf.monitor.leader_timeout)]
        url = parts._replace(
            query=urllib.parse.urlencode(query, doseq=True)).geturl()
    return url


def lifetime(conf, url):
    """Seconds a renewed lock at ``url`` is surely held.

    None for a lock held until released (a file lock goes with its
    process).
    """
    if urllib.parse.urlsplit(url).scheme == 'file':
        return None
    return conf.monitor.leader_timeout


class Leadership:

    def __init__(self, url, member_id=None, remind_every=300,
                 lifetime=None, clock=time.monotonic):
        """A leadership through the tooz lock at ``url``.

        ``lifetime``: seconds a renewed lock is surely held (the lock's
        timeout); None for a lock held until released.
        """
        self._url = url
        self._lifetime = lifetime
        self._clock = clock
        # Renewals from the look and from the writes of other threads.
        self._renewing = threading.Lock()
        self._member_id = (member_id or '%s-%d' % (
            socket.gethostname(), os.getpid())).encode()
        self._coordinator = None
        self._connecting = None
        self._lock = None
        self._unreachable = condition_log.ConditionLog(
            LOG, LOCK_UNREACHABLE, remind_every)
        self.leading = False

    @property
    def shown_url(self):
        """The lock's URL for log lines: no credentials, no options."""
        return coordination_conf.shown_url(self._url)

    @property
    def member_id(self):
        return self._member_id.decode()

    def start(self):
        """Ready to try the lock; a URL tooz does not know raises here.

        The backend is reached from the first :meth:`leads` on, in a
        thread of its own (see :meth:`_connected`).
        """
        for name in _TOOZ_LOCK_LOGGERS:
            std_logging.getLogger(name).addFilter(_WITHOUT_TRACEBACK)
        self._coordinator = coordination.get_coordinator(self._url,
                                                         self._member_id)
        return self

    def _connected(self):
        """Whether the backend answered: connect when not yet done.

        The connection is made in a thread of its own, which a look waits
        for CONNECT_PATIENCE seconds at most: tooz's Redis driver retries
        a refused connection for a minute, which must hold neither the
        monitor's looks nor its stop, nor keep it from saying so.
        """
        if self._lock is not None:
            return True
        if self._connecting is None:
            self._connecting = background.Call(functools.partial(
                self._coordinator.start, start_heart=True), 'leader-lock')
        connecting = self._connecting
        if not connecting.wait(CONNECT_PATIENCE - connecting.running_for()):
            self._unreachable.update(['lock'], url=self.shown_url,
                                     error='no answer for %d s' %
                                     round(connecting.running_for()))
            return False
        self._connecting = None
        try:
            connecting.result()
        except Exception as exc:  # noqa: tooz lets its backend's errors out
            self._unreachable.update(['lock'], url=self.shown_url,
                                     error=exception.first_line(exc))
            return False
        self._unreachable.update([], url=self.shown_url)
        self._lock = self._coordinator.get_lock(LOCK_NAME)
        return True

    def leads(self):
        """Whether this monitor leads now: it holds, or just took, the lock.

        Any failure of the backend counts as not leading.
        """
        if not self._connected():
            return False
        try:
            with self._renewing:
                if self.leading:
                    self.leading = self._renewed()
                else:
                    self.leading = self._lock.acquire(blocking=False)
        except Exception as exc:  # noqa: tooz lets its backend's errors out
            if self.leading:
                LOG.warning('No longer leading: the leader lock cannot be '
                            'renewed (%s).', exc)
                self._let_go()
            self.leading = False
        return self.leading

    def still_leads(self):
        """Whether this monitor leads at this moment, proven by a renewal.

        Asked right before a write: the lock is renewed now, within
        RENEW_PATIENCE, and the renewal must have started less than the
        lock's lifetime ago when it answers. A lock lost, taken over or
        out of reach ends leadership at once, for every thread.
        """
        if not self.leading:
            return False
        asked_at = self._clock()
        renewal = background.Call(self._renewed_safely, 'leader-renewal')
        renewed = (renewal.wait(RENEW_PATIENCE) and renewal.result() and
                   (self._lifetime is None or
                    self._clock() - asked_at < self._lifetime))
        if not renewed and self.leading:
            LOG.warning('No longer leading: the leader lock could not be '
                        'renewed before a write; the write is not made.')
            self.leading = False
            # Released, or tooz's heartbeat would keep renewing a lock
            # that this monitor no longer acts on.
            background.Call(self._released_safely, 'leader-release')
        return renewed

    def _renewed_safely(self):
        try:
            with self._renewing:
                return self._renewed()
        except Exception:  # noqa: tooz lets its backend's errors out
            return False

    def _released_safely(self):
        with self._renewing:
            if not self.leading:
                self._let_go()

    def _let_go(self):
        """Stop renewing a lost lock (tooz's heartbeat would go on)."""
        try:
            self._lock.release()
        except Exception:  # noqa: it is lost already
            pass

    def _renewed(self):
        renew = getattr(self._lock, 'heartbeat', None)
        # A lock without a heartbeat (a file lock) is held until released.
        return True if renew is None else renew() is not False

    def stop(self):
        if self._lock is None:
            return
        try:
            if self.leading:
                self._lock.release()
            self._coordinator.stop()
        except coordination.ToozError as exc:
            LOG.warning('Leaving the leader lock: %s', exc)
        self.leading = False
