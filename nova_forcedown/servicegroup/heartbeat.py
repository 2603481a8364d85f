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
    """

    def __init__(self, report, services, interval, remind_every,
                 clock=time.monotonic, alive=None):
        super().__init__(interval, 'heartbeat')
        self._report = report
        self._services = list(services)
        self._alive = alive
        self._forced_down, self._gone, self._database_down, self._failing = (
            condition_log.ConditionLog(LOG, messages, remind_every, clock)
            for messages in (FORCED_DOWN, ROWS_GONE, DATABASE_DOWN, FAILING))

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
            self._failed(failure)
            return False
        self._database_down.update([])
        self._failing.update([])
        gone = dict.fromkeys(name(service) for service in gone)
        self._gone.update(list(gone))
        self._forced_down.update([
            name(service) for service in services
            if service.forced_down and name(service) not in gone],
            forget=gone)
        return not gone

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
