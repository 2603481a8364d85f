"""Log a lasting condition when it starts and ends, and remind in between.

The heartbeat loop and the agent see the same state on every tick: a
service stays forced down for days, a deleted row stays deleted, an outage
lasts minutes. A line per tick and per host says nothing new and buries what
does (227 lines in 4 minutes for two forced-down hosts). A
:class:`ConditionLog` instead follows the names (hosts, services, nodes)
that are in one condition: names that enter it are logged at once, names
that leave it at INFO, and while some remain one reminder line names them
every ``remind_every`` seconds. Whatever the number of names, each of these
is one line per tick, with the count and the first few names.
"""

import time
import typing

from oslo_log import log as logging

# Names shown in one line; the rest are counted ("and 495 more").
SHOWN_NAMES = 5


class Messages(typing.NamedTuple):
    """The lines of one condition.

    ``started``, ``reminder`` and ``ended`` are each a pair of templates,
    for one name and for several, or one template for both. They may use
    ``%(names)s``, ``%(count)d``, ``%(seconds)d`` (since the condition
    started) and the values given to :meth:`ConditionLog.update`.
    ``started`` and ``reminder`` are logged at ``level``, ``ended`` at
    INFO.
    """

    level: int
    started: object
    reminder: object
    ended: object


class ConditionLog:
    """Which names are in one condition, and what has been said about it."""

    def __init__(self, logger, messages, remind_every, clock=time.monotonic):
        self._log = logger
        self._messages = messages
        self._remind_every = remind_every
        self._clock = clock
        self._names = {}
        self._started_at = None
        self._reminded_at = None

    def update(self, names, exc_info=None, forget=(), **values):
        """Say what changed, now that exactly ``names`` are in the condition.

        Names that left are logged, then names that entered; while some
        remain, all of them are named again every ``remind_every`` seconds
        from the start of the condition. ``exc_info`` (an exception) puts
        its traceback under the line of the names that entered, and only
        there. Names in ``forget`` leave without a word: what they were
        no longer exists (a deleted service is not "no longer forced
        down").
        """
        now = self._clock()
        current = dict.fromkeys(names)
        entered = [name for name in current if name not in self._names]
        left = [name for name in self._names
                if name not in current and name not in forget]
        if current and not self._names:
            self._started_at = self._reminded_at = now
        started_at = now if self._started_at is None else self._started_at
        values = dict(values, seconds=now - started_at)
        self._names = current
        if left:
            self._say(logging.INFO, self._messages.ended, left, values)
        if entered:
            self._say(self._messages.level, self._messages.started, entered,
                      values, exc_info=exc_info)
        if current and now - self._reminded_at >= self._remind_every:
            self._say(self._messages.level, self._messages.reminder,
                      list(current), values)
            self._reminded_at = now
        if not current:
            self._started_at = None

    def _say(self, level, templates, names, values, exc_info=None):
        if isinstance(templates, str):
            templates = (templates, templates)
        one, many = templates
        self._log.log(level, one if len(names) == 1 else many,
                      dict(values, names=describe(names), count=len(names)),
                      exc_info=exc_info)


def describe(names):
    """The first few names, then how many more: ``a, b, c and 7 more``."""
    shown = ', '.join(names[:SHOWN_NAMES])
    rest = len(names) - SHOWN_NAMES
    return shown + (' and %d more' % rest if rest > 0 else '')
