"""Work done every interval in a thread of its own, until stopped.

futurist's PeriodicWorker keeps the time. Its ``start()`` runs the calls
and returns only once stopped, so it runs in a daemon thread: a call that
hangs (a database that does not answer) never keeps the process from
exiting. The next call comes ``interval`` seconds after one ends, so slow
calls never pile up; or, for a ticker whose calls must start on time,
``interval`` seconds after one started (at once when it took longer).
"""

import threading
import time

from futurist import periodics

_NEVER = float('inf')


class Ticker:
    """Call ``tick()`` every ``interval`` seconds until stopped.

    The first call comes at once, or after one interval when not
    ``run_immediately``. ``on_time``: the interval counts from the start
    of the last call, not its end.
    """

    def __init__(self, interval, name, run_immediately=True, on_time=False):
        self._interval = interval

        @periodics.periodic(interval, run_immediately=run_immediately)
        def tick():
            self.tick()

        self._worker = periodics.PeriodicWorker(
            [(tick, (), {})],
            schedule_strategy='last_started' if on_time else 'last_finished')
        self._thread = threading.Thread(target=self._worker.start,
                                        name=name, daemon=True)

    def start(self):
        self._thread.start()
        return self

    def stop(self, timeout=None):
        """No call starts after this; waits ``timeout`` for one under way.

        futurist's ``stop()`` takes the lock its worker holds while a call
        runs, so it is asked from a thread of its own: a call that hangs
        (a backend retrying for a minute) cannot hold the stop longer.
        """
        deadline = None if timeout is None else time.monotonic() + timeout
        asking = threading.Thread(target=self._worker.stop,
                                  name='stopping', daemon=True)
        asking.start()
        asking.join(timeout)
        if self._thread.is_alive():
            self._thread.join(None if deadline is None else
                              max(0.0, deadline - time.monotonic()))

    def wait(self, timeout=None):
        self._thread.join(timeout)

    def tick(self):
        raise NotImplementedError()


class Every(Ticker):
    """Call ``function()`` every ``interval`` seconds until stopped."""

    def __init__(self, function, interval, name, run_immediately=True):
        super().__init__(interval, name, run_immediately)
        self._function = function

    def tick(self):
        self._function()


class WhenWoken:
    """Call ``function(woken)`` when woken, and every ``interval`` seconds.

    ``woken``: what the wake-ups since the last call named, or None for a
    call the interval brought (the first comes at once; with an interval
    of None, it is the only one); it must not raise, or the calls end.
    Wake-ups that come while a call runs are kept for the next one, so a
    burst costs a call or two, not one each. futurist's periodic calls
    cannot be brought forward, hence a thread and a condition of its own.
    """

    def __init__(self, function, interval, name, clock=time.monotonic):
        self._function = function
        self._interval = interval
        self._clock = clock
        self._condition = threading.Condition()
        self._woken = set()
        self._stopped = False
        self._thread = threading.Thread(target=self._run, name=name,
                                        daemon=True)

    def start(self):
        self._thread.start()
        return self

    def wake(self, item):
        with self._condition:
            self._woken.add(item)
            self._condition.notify()

    def stop(self, timeout=None):
        """No call starts after this; waits ``timeout`` for one under way."""
        with self._condition:
            self._stopped = True
            self._condition.notify()
        if self._thread.is_alive():
            self._thread.join(timeout)

    def _until(self, due):
        """Seconds to wait for ``due``; None (no limit) for never."""
        return None if due == _NEVER else max(0.0, due - self._clock())

    def _run(self):
        due = self._clock()
        while True:
            with self._condition:
                while not (self._stopped or self._woken or
                           self._clock() >= due):
                    self._condition.wait(self._until(due))
                if self._stopped:
                    return
                woken, self._woken = self._woken, set()
            if self._clock() >= due:
                due = (_NEVER if self._interval is None
                       else self._clock() + self._interval)
                woken = None
            self._function(woken)
