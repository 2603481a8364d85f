"""A call that may hang, run in a daemon thread, with bounded waits on it.

tooz's clients retry a backend that refuses connections for about a minute
inside one call. Whoever must answer sooner (a request, a monitor's look)
starts the call here and waits for it only as long as it can; the call
carries on, and a later wait may find it done. Being a daemon thread, a
call still hanging never keeps the process from exiting.
"""

import threading
import time


class Call:
    """``function()`` running in a daemon thread named ``name``."""

    def __init__(self, function, name, clock=time.monotonic):
        self.started_at = clock()
        self._clock = clock
        self._function = function
        self._value = None
        self._error = None
        self._thread = threading.Thread(target=self._run, name=name,
                                        daemon=True)
        self._thread.start()

    def _run(self):
        try:
            self._value = self._function()
        except Exception as exc:  # noqa: kept for whoever waits
            self._error = exc

    def wait(self, timeout):
        """Whether the call ended within ``timeout`` seconds (0: no wait).

        Once it has, its thread is gone too.
        """
        self._thread.join(max(0.0, timeout))
        return not self._thread.is_alive()

    def result(self):
        """What the ended call returned; what it raised is raised again."""
        if self._error is not None:
            raise self._error
        return self._value

    def running_for(self):
        return self._clock() - self.started_at
