"""Work done every interval in a thread of its own, until stopped.

futurist's PeriodicWorker keeps the time. Its ``start()`` runs the calls
and returns only once stopped, so it runs in a daemon thread: a call that
hangs (a database that does not answer) never keeps the process from
exiting. The next call comes ``interval`` seconds after one ends, so slow
calls never pile up.
"""

import threading

from futurist import periodics


class Ticker:
    """Call ``tick()`` every ``interval`` seconds until stopped.

    The first call comes at once, or after one interval when not
    ``run_immediately``.
    """

    def __init__(self, interval, name, run_immediately=True):
        self._interval = interval

        @periodics.periodic(interval, run_immediately=run_immediately)
        def tick():
            self.tick()

        self._worker = periodics.PeriodicWorker(
            [(tick, (), {})], schedule_strategy='last_finished')
        self._thread = threading.Thread(target=self._worker.start,
                                        name=name, daemon=True)

    def start(self):
        self._thread.start()
        return self

    def stop(self, timeout=None):
        """No call starts after this; waits ``timeout`` for one under way."""
        self._worker.stop()
        if self._thread.is_alive():
            self._thread.join(timeout)

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
