"""Console scripts. Each turns configuration and database problems into a
one-line error and a non-zero exit, never a traceback.

eventlet's deprecation warning is silenced by the package itself
(nova_forcedown/__init__.py), for every entry point, not here.
"""

import signal
import threading


def stop_on_signals():
    """An event that SIGTERM and SIGINT set: a service's stop."""
    stop = threading.Event()

    def handler(signum, frame):
        stop.set()

    for signum in (signal.SIGTERM, signal.SIGINT):
        signal.signal(signum, handler)
    return stop
