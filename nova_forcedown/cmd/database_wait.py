"""Waiting at start for a database that is away or behind this code.

A service started at boot may come up before its database server does, or
beside an API that migrates the schema as it starts (``[database]
sync_on_startup``), or during an upgrade whose db sync is still to come.
The long-running services (the agent, the monitor) wait for both, as
Nova's services wait for their database at start, paced by the options
that pace oslo.db's first connection: ``[database] max_retries`` tries
(-1: for ever), ``retry_interval`` seconds apart. Each wait is said once,
in its own words, with a reminder while it lasts; SIGTERM ends it at once.
"""

import itertools

from oslo_log import log as logging

from nova_forcedown import condition_log
from nova_forcedown.db import engine as db_engine
from nova_forcedown import exception

LOG = logging.getLogger(__name__)

DATABASE_DOWN_AT_START = condition_log.Messages(
    level=logging.WARNING,
    started='Cannot start, the database is unavailable (%(error)s); '
            'trying again every %(interval)s s, %(tries)s.',
    reminder='Still waiting for the database after %(seconds)d s '
             '(%(error)s); trying again every %(interval)s s, %(tries)s.',
    ended='Recovered: the database answers again after %(seconds)d s.')

SCHEMA_BEHIND_AT_START = condition_log.Messages(
    level=logging.WARNING,
    started='Cannot start yet: %(error)s Waiting for the schema, which a '
            'server started with [database] sync_on_startup may be '
            'migrating; trying again every %(interval)s s, %(tries)s.',
    reminder='Still waiting for the database schema after %(seconds)d s '
             '(%(error)s); trying again every %(interval)s s, %(tries)s.',
    ended='The database schema is current after %(seconds)d s.')

# What a start waits for.
_OUTAGE = 'outage'
_SCHEMA = 'schema'


def tries_at_start(conf):
    """How often to try the database at start: None for ever.

    oslo.db itself is set to try once: this process waits in its own loop,
    which SIGTERM ends at once.
    """
    tries = conf.database.max_retries
    db_engine.try_once_at_start(conf)
    return None if tries == -1 else max(1, tries)


def until_database_answers(conf, stop, tries, step):
    """Run ``step`` until the database answers it, ``tries`` times at most.

    ``step`` must be safe to run again after an outage cut it short.
    False if ``stop`` is set meanwhile; the last error (DatabaseUnavailable
    or DatabaseNotMigrated) when the tries run out.
    """
    waits = {
        _OUTAGE: condition_log.ConditionLog(
            LOG, DATABASE_DOWN_AT_START, conf.log_reminder_interval),
        _SCHEMA: condition_log.ConditionLog(
            LOG, SCHEMA_BEHIND_AT_START, conf.log_reminder_interval)}
    interval = conf.database.retry_interval
    attempts = itertools.count(1) if tries is None else range(1, tries + 1)
    for attempt in attempts:
        kind, error = _what_stops(step)
        for waited, log in waits.items():
            if waited != kind:
                log.update([])
        if kind is None:
            return True
        if attempt == tries:
            raise _given_up(kind, error, tries)
        waits[kind].update(['database'], error=exception.first_line(error),
                           interval=interval,
                           tries='until it answers' if tries is None else
                           'up to %d times' % tries)
        if stop.wait(interval):
            return False


def _what_stops(step):
    """(None, None) once ``step`` ran; else what kind of wait, and why."""
    try:
        step()
    except exception.DatabaseNotMigrated as exc:
        return _SCHEMA, exc
    except Exception as exc:
        if _is_outage(exc):
            return _OUTAGE, exc
        raise
    return None, None


def _is_outage(exc):
    return (isinstance(exc, exception.DatabaseUnavailable) or
            db_engine.is_outage(exc))


def _given_up(kind, error, tries):
    if kind == _SCHEMA:
        return error
    return exception.DatabaseUnavailable(
        reason='%s, after %d tries ([database] max_retries)' % (
            exception.first_line(error), tries))
