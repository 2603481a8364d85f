"""A background thread that reports services alive every interval."""

import threading

from oslo_db import exception as db_exc
from oslo_log import log as logging
from sqlalchemy import exc as sa_exc

LOG = logging.getLogger(__name__)

# What a database outage looks like: oslo.db's wrapped errors, and the
# OperationalError (lock timeout, lost server) that oslo.db passes through.
DATABASE_ERRORS = (db_exc.DBError, sa_exc.OperationalError)


class Heartbeat:
    """Call ``report(services)`` every ``interval`` seconds until stopped.

    ``report`` writes the heartbeats of all the services and returns those
    whose rows are gone. No failure of one tick stops the loop: a missing
    row, a database outage or any other error is logged and the next tick
    tries again.
    """

    def __init__(self, report, services, interval, initial_delay=0):
        self._report = report
        self._services = list(services)
        self._interval = interval
        self._initial_delay = initial_delay
        self._stopped = threading.Event()
        self._database_down = False
        self._thread = threading.Thread(target=self._run, daemon=True,
                                        name='heartbeat')

    def start(self):
        self._thread.start()
        return self

    def stop(self, timeout=None):
        self._stopped.set()
        if self._thread.is_alive():
            self._thread.join(timeout)

    def wait(self, timeout=None):
        self._thread.join(timeout)

    def _run(self):
        if self._stopped.wait(self._initial_delay):
            return
        while not self._stopped.is_set():
            self.tick()
            self._stopped.wait(self._interval)

    def tick(self):
        """Report every service once; returns True when all succeeded."""
        try:
            gone = self._report(self._services)
        except DATABASE_ERRORS as exc:
            LOG.warning('Heartbeats failed, the database is unavailable '
                        '(%(error)s); retrying in %(interval)s s.',
                        {'error': first_line(exc),
                         'interval': self._interval})
            self._database_down = True
            return False
        except Exception:
            LOG.exception('Unexpected error in the heartbeats of %(count)d '
                          'service(s), %(first)s among them; retrying next '
                          'interval.', {'count': len(self._services),
                                        'first': _name(self._services[0])})
            return False
        if self._database_down:
            LOG.info('Recovered: heartbeats are reaching the database again.')
            self._database_down = False
        for service in gone:
            LOG.error('The services table record for host %(host)s binary '
                      '%(binary)s is gone; it will not be recreated. Restart '
                      'the agent to register the service again.',
                      {'host': service.host, 'binary': service.binary})
        return not gone


def _name(service):
    return '%s/%s' % (service.host, service.binary)


def first_line(exc):
    text = str(getattr(exc, 'inner_exception', None) or exc).strip()
    return text.splitlines()[0] if text else type(exc).__name__
