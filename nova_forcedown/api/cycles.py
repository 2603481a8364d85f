"""The cyclic garbage collector, paused while a large listing is built.

A listing of ten thousand servers makes tens of thousands of containers
(records, view dicts, link lists), none of them in a reference cycle:
reference counting frees each one. The cyclic collector still walks them,
and with them every object the process holds, each time their number
crosses its thresholds: a fifth of such a listing's CPU time. So the
collector is off while any thread of the worker builds one, and on again
(if it was on) when the last of them is done. Each one, when done, runs a
collection of the youngest generation, so that cycles made meanwhile, by
any thread, do not wait for a moment when no listing is being built.
"""

import contextlib
import gc
import threading


class _Pause:
    """A count of the threads that want the collector off."""

    def __init__(self):
        self._lock = threading.Lock()
        self._holders = 0
        self._was_enabled = False

    @contextlib.contextmanager
    def __call__(self):
        with self._lock:
            if not self._holders:
                self._was_enabled = gc.isenabled()
                gc.disable()
            self._holders += 1
        try:
            yield
        finally:
            with self._lock:
                self._holders -= 1
                collect = self._was_enabled
                if not self._holders and collect:
                    gc.enable()
            if collect:
                gc.collect(0)


paused = _Pause()
