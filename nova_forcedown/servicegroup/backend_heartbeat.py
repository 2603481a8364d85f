"""The heartbeat loop of members of the tooz group of services.

One loop serves the agent on the tooz servicegroup driver (its services,
every report_interval, forgotten after service_down_time) and the pulse
(one compute host, every ``[pulse] interval``, forgotten after ``[pulse]
ttl``).
"""

import time

from oslo_log import log as logging
from tooz import coordination

from nova_forcedown import background
from nova_forcedown import condition_log
from nova_forcedown.conf import coordination as coordination_conf
from nova_forcedown import exception
from nova_forcedown import periodic
from nova_forcedown.servicegroup import heartbeat
from nova_forcedown.servicegroup import membership

LOG = logging.getLogger(__name__)

# The agent's: it heartbeats to the database too.
HEARTBEATS_DOWN = condition_log.Messages(
    level=logging.WARNING,
    started='Heartbeats to the coordination backend failed (%(error)s); '
            'retrying every %(interval)s s, and heartbeating to the '
            'database meanwhile.',
    reminder='Heartbeats to the coordination backend still fail after '
             '%(seconds)d s (%(error)s).',
    ended='Recovered: heartbeats reach the coordination backend again, '
          'after %(seconds)d s.')


class BackendHeartbeat(periodic.Ticker):
    """One thread that heartbeats many members to the backend.

    Each service has its own coordinator (one backend connection, no
    thread): tooz keeps one heartbeat per member. Every tick sends each
    one heartbeat. Every member joins the group (creating it when missing)
    at start, after a failed tick, and after a tick that came later than
    its membership timeout (readers may have removed its members
    meanwhile); every ``check_every`` seconds each member checks that it
    is still there, and joins again if not, so a backend that restarted
    empty learns them again.

    The check reads: a join writes the group even when the member is in
    it, and every write of the group makes tooz's Redis driver start its
    readers' membership read again. Members joining again and again every
    few seconds (thousands of hosts) left listings no read that finished.
    """

    def __init__(self, conf, services, clock=time.monotonic, alive=None,
                 interval=None, ttl=None, check_every=None,
                 failing=HEARTBEATS_DOWN):
        """Heartbeat ``services`` (anything with ``binary`` and ``host``).

        ``interval`` (seconds between two ticks), ``ttl`` (the members'
        membership timeout) and ``check_every`` (seconds between two
        checks that they are members) are, unless given, the agent's:
        report_interval, service_down_time and [coordination]
        database_report_interval. ``failing``: the lines of a failure
        (a condition_log.Messages that may use ``%(interval)s``).
        """
        interval = conf.report_interval if interval is None else interval
        super().__init__(interval, 'backend-heartbeat')
        self._url = conf.coordination.backend_url
        self._services = list(services)
        self._alive = alive
        self._ttl = conf.service_down_time if ttl is None else ttl
        if check_every is None:
            check_every = coordination_conf.database_report_interval(conf)
        self._check_every = max(1, round(check_every / interval))
        self._clock = clock
        self._coordinators = {}
        self._ticks = 0
        self._last_tick_at = None
        self._must_join = True
        self._beating = None
        self._progress_at = None
        self._shown_url = coordination_conf.shown_url(self._url)
        self._shown_interval = '%g' % interval
        self._failing = condition_log.ConditionLog(
            LOG, failing, conf.log_reminder_interval, clock)

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
                # The backend may come back empty: the heartbeats under
                # way join again once they get through.
                self._must_join = True
                self._failing.update(
                    ['backend'], interval=self._shown_interval,
                    error='no answer from %s for %s s' % (
                        self._shown_url, self._shown_interval))
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
        self._failing.update(['backend'], interval=self._shown_interval,
                             **membership.said(failure))
        return False

    def leave(self, timeout):
        """Leave the group and close the connections, once stopped.

        Returns None when done within ``timeout`` seconds, else why not,
        in one line: the members then stay until their membership timeout
        runs out. Heartbeats still under way are waited for first (within
        the same time), so that no join comes after the leave.
        """
        deadline = time.monotonic() + timeout
        beating = self._beating
        if beating is not None and not beating.wait(timeout):
            return 'a heartbeat still waits for %s' % self._shown_url
        leaving = background.Call(self._leave_all, 'backend-leave')
        if not leaving.wait(deadline - time.monotonic()):
            return 'no answer from %s for %g s' % (self._shown_url, timeout)
        try:
            leaving.result()
        except Exception as exc:  # noqa: said in the caller's line
            return '%s: %s' % (type(exc).__name__, exception.first_line(exc))
        return None

    def _leave_all(self):
        for coordinator in list(self._coordinators.values()):
            try:
                coordinator.leave_group(membership.GROUP_ID).get()
            except (coordination.MemberNotJoined,
                    coordination.GroupNotCreated):
                pass
            coordinator.stop()

    def _progressed(self):
        self._progress_at = time.monotonic()

    def _beat(self):
        """Heartbeat every member, joining again when it must.

        A join asked while the beat runs (a tick found the backend
        silent) is seen by the members heartbeaten after it, and stays
        asked for the next beat.
        """
        now = self._clock()
        join = self._must_join or self._came_late(now)
        self._must_join = False
        check = not join and self._ticks % self._check_every == 0
        for service in heartbeat.reporting(self._services, self._alive):
            member = membership.member_id(service)
            coordinator = self._coordinator(member)
            coordinator.heartbeat()
            if (join or self._must_join or
                    (check and not _is_member(coordinator, member))):
                _join(coordinator)
            self._progressed()
        self._last_tick_at = now
        self._ticks += 1

    def _came_late(self, now):
        """Whether the members' heartbeats may have expired since the last."""
        return (self._last_tick_at is not None and
                now - self._last_tick_at > self._ttl)

    def _coordinator(self, member):
        coordinator = self._coordinators.get(member)
        if coordinator is None:
            coordinator = membership.get_coordinator(self._url, member,
                                                     self._ttl)
            self._coordinators[member] = coordinator
        return coordinator


def _is_member(coordinator, member):
    """Whether ``member`` is in the group: a read, unlike a join."""
    try:
        coordinator.get_member_capabilities(membership.GROUP_ID,
                                            member).get()
    except (coordination.MemberNotJoined, coordination.GroupNotCreated):
        return False
    return True


def _join(coordinator):
    """Join the group, creating it when missing; already in is fine."""
    try:
        coordinator.join_group(membership.GROUP_ID).get()
    except coordination.MemberAlreadyExist:
        pass
    except coordination.GroupNotCreated:
        try:
            coordinator.create_group(membership.GROUP_ID).get()
        except coordination.GroupAlreadyExist:
            pass
        _join(coordinator)
