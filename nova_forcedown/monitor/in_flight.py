"""How many evacuations the monitor may start now: ``[monitor] max_in_flight``.

The evacuations under way are counted on the target at each look (its
migrations not yet over), but the monitor starts evacuations between
looks too: each host's jobs run in the pool, and a host just forced down
starts its first batch at once. So the count is the last read, plus every
evacuation started since that read began, plus those promised to jobs and
not yet started. It may count one twice (started during the read) or
count one that ended since: it errs towards starting fewer, until the
next read, and never starts more than the bound.
"""

import threading


class InFlight:

    def __init__(self, limit):
        self._limit = limit
        self._lock = threading.Lock()
        # Under way at the last read of the target.
        self._read = 0
        # Evacuations started by this monitor, ever; and at the last read.
        self._started = 0
        self._started_at_read = 0
        # Promised to jobs and not yet started.
        self._promised = 0

    def read_begins(self):
        """A mark to hand to :meth:`read` once the target is read."""
        with self._lock:
            return self._started

    def read(self, under_way, mark):
        """``under_way`` evacuations were found by a read begun at ``mark``."""
        with self._lock:
            self._read = under_way
            self._started_at_read = mark

    def claim(self, wanted):
        """How many of ``wanted`` evacuations may start; promised until told.

        Each one claimed is then either :meth:`started` or
        :meth:`released`.
        """
        with self._lock:
            room = self._limit - self._count()
            granted = max(0, min(wanted, room))
            self._promised += granted
            return granted

    def started(self):
        """One evacuation claimed was accepted by the target."""
        with self._lock:
            self._promised -= 1
            self._started += 1

    def released(self, count):
        """``count`` evacuations claimed will not be started."""
        with self._lock:
            self._promised -= count

    def _count(self):
        return (self._read + self._started - self._started_at_read +
                self._promised)
