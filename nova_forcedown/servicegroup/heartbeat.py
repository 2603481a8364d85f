"""A background thread that reports services alive every interval."""

import time

from oslo_log import log as logging

from nova_forcedown import condition_log
from nova_forcedown import exception
from nova_forcedown import periodic

LOG = logging.getLogger(__name__)

FORCED_DOWN = condition_log.Messages(
    level=logging.WARNING,
    started=('Service %(names)s is forced down: it keeps heartbeating but '
             'reports down until an operator clears forced_down.',
             '%(count)d services are forced down: %(names)s. They keep '
             'heartbeating but report down until an operator clears '
             'forced_down.'),
    reminder=('Service %(names)s is still forced down.',
              '%(count)d services are still forced down: %(names)s.'),
    ended=('Service %(names)s is no longer forced down.',
           '%(count)d services are no longer forced down: %(names)s.'))

ROWS_GONE = condition_log.Messages(
    level=logging.ERROR,
    started=('The services table record of %(names)s is gone; it will not '
             'be recreated. Restart the agent to register the service '
             'again.',
             'The services table records of %(count)d services are gone: '
             '%(names)s. They will not be recreated. Restart the agent to '
             'register them again.'),
    reminder=('The services table record of %(names)s is still gone; '
              'restart the agent to register the service again.',
              'The services table records of %(count)d services are still '
              'gone: %(names)s. Restart the agent to register them again.'),
    ended=('The services table record of %(names)s is back; it heartbeats '
           'again.',
           'The services table records of %(count)d services are back: '
           '%(names)s. They heartbeat again.'))

DATABASE_DOWN = condition_log.Messages(
    level=logging.WARNING,
    started='Heartbeats failed, the database is unavailable (%(error)s); '
            'retrying every %(interval)s s.',
    reminder='Heartbeats still fail after %(seconds)d s, the database is '
             'unavailable (%(error)s); retrying every %(interval)s s.',
    ended='Recovered: heartbeats are reaching the database again, after '
          '%(seconds)d s.')

SHARED = condition_log.Messages(
    level=logging.ERROR,
    started=('Another agent heartbeats as %(names)s too: its report count '
             'rose by more than the heartbeats of this agent. While both '
             'run, the host looks up when either does, so its failure goes '
             'unseen. Run one agent per host name: stop the other, or give '
             'it a [DEFAULT] host of its own.',
             'Other agents heartbeat as %(count)d services of this agent '
             'too: %(names)s. Their report counts rose by more than the '
             'heartbeats of this agent. While both run, a host looks up '
             'when either does, so its failure goes unseen. Run one agent '
             'per host name: stop the others, or give them hosts of their '
             'own.'),
    reminder=('Another agent still heartbeats as %(names)s; run one agent '
              'per host name.',
              'Other agents still heartbeat as %(count)d services of this '
              'agent: %(names)s; run one agent per host name.'),
    ended=('No other agent has heartbeated as %(names)s for %(window)d s.',
           'No other agent has heartbeated as %(count)d services of this '
           'agent for %(window)d s: %(names)s.'))

FAILING = condition_log.Messages(
    level=logging.ERROR,
    started='Unexpected error in the heartbeats of %(services)d '
            'service(s), %(first)s among them (%(error)s); retrying every '
            '%(interval)s s.',
    reminder='Heartbeats still fail after %(seconds)d s with an unexpected '
             'error: %(error)s; retrying every %(interval)s s.',
    ended='Recovered: heartbeats succeed again, after %(seconds)d s.')


class Heartbeat(periodic.Ticker):
    """Call ``report(services)`` every ``interval`` seconds until stopped.

    ``report`` writes the heartbeats of all the services, leaves each
    service's ``forced_down`` as stored, and returns those whose rows are
    gone. No failure of one tick stops the loop: a missing row, a database
    outage or any other error is logged and the next tick tries again.

    What the ticks find (services forced down, rows gone, an outage, an
    unexpected error) is logged when it starts and when it ends, and
    reminded every ``remind_every`` seconds while it lasts, one line for
    all the services concerned: never a line per service per tick.

    Another agent heartbeating as one of the services (the same host name
    given twice) shows as a report count that rose by more than one between
    two ticks; the service stays named until no such rise was seen for
    ``remind_every`` seconds, so two agents whose ticks interleave unevenly
    never make the line come and go.
    """

    def __init__(self, report, services, interval, remind_every,
                 clock=time.monotonic, alive=None):
        super().__init__(interval, 'heartbeat')
        self._report = report
        self._services = list(services)
        self._alive = alive
        self._clock = clock
        self._remind_every = remind_every
        # name -> report_count after this agent's last heartbeat of it, and
        # name -> when a rise by another agent was last seen.
        self._counts = {}
        self._others_seen_at = {}
        (self._forced_down, self._gone, self._database_down, self._failing,
         self._shared) = (
            condition_log.ConditionLog(LOG, messages, remind_every, clock)
            for messages in (FORCED_DOWN, ROWS_GONE, DATABASE_DOWN, FAILING,
                             SHARED))

    def tick(self):
        """Report every service once; returns True when all succeeded."""
        services = []
        try:
            services = reporting(self._services, self._alive)
            gone = self._report(services) if services else []
        except Exception as exc:
            failure = exc
        else:
            failure = None
        # Logged out of the except block: oslo.log would otherwise append
        # the exception to every line, repeating what the line says.
        if failure is not None:
            # The heartbeat may have committed unseen: count afresh.
            self._counts = {}
            self._failed(failure)
            return False
        self._database_down.update([])
        self._failing.update([])
        gone = dict.fromkeys(name(service) for service in gone)
        self._gone.update(list(gone))
        self._shared.update(self._shared_names(services, gone), forget=gone,
                            window=self._remind_every)
        self._forced_down.update([
            name(service) for service in services
            if service.forced_down and name(service) not in gone],
            forget=gone)
        return not gone

    def _shared_names(self, services, gone):
        """Names of the services another agent heartbeats as too, lately."""
        now = self._clock()
        counts = {}
        for service in services:
            key = name(service)
            if key in gone:
                continue
            counts[key] = service.report_count
            before = self._counts.get(key)
            if before is not None and service.report_count > before + 1:
                self._others_seen_at[key] = now
        self._counts = counts
        self._others_seen_at = {
            key: seen for key, seen in self._others_seen_at.items()
            if key not in gone and now - seen < self._remind_every}
        return list(self._others_seen_at)

    def _failed(self, exc):
        if isinstance(exc, exception.DatabaseUnavailable):
            self._database_down.update(['database'],
                                       error=exception.first_line(exc),
                                       interval=self._interval)
        else:
            self._failing.update(['failing'], exc_info=exc,
                                 error=exception.first_line(exc),
                                 services=len(self._services),
                                 first=name(self._services[0]),
                                 interval=self._interval)


def reporting(services, alive):
    """Those of ``services`` that can report now (``alive``: see API.join)."""
    if alive is None:
        return services
    return [service for service in services if alive(service)]


def name(service):
    """How the log names a service: ``nova-compute on compute1``."""
    return '%s on %s' % (service.binary, service.host)
