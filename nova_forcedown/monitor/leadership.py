"""One monitor acts, however many run: the holder of a tooz lock.

Every monitor tries the lock at each look; the one holding it leads and
renews it, the others stand by. A leader that dies stops renewing: on
Redis its lock expires after ``[monitor] leader_timeout`` seconds and the
next monitor to try takes it; a file lock goes with its process at once.
A leader that cannot renew its lock (its backend away, or the lock taken
over after a pause) stops acting at once: two monitors never act
together. A backend away when the monitor starts is tried again at each
look, the monitor standing by meanwhile.
"""

import functools
import logging as std_logging
import os
import socket
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
    if url is None and conf.servicegroup_driver == 'tooz':
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


class Leadership:

    def __init__(self, url, member_id=None, remind_every=300):
        self._url = url
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
