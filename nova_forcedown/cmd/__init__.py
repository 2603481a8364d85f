"""Console scripts. Each turns configuration and database problems into a
one-line error and a non-zero exit, never a traceback.

eventlet's deprecation warning is silenced by the package itself
(nova_forcedown/__init__.py), for every entry point, not here.
"""

import gc
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


def before_exit():
    """Spare an exiting service the interpreter's final collections.

    They walk every object of the loaded service, only for the memory to be
    handed back to the system anyway: up to a second or two of CPU on a
    busy host between a SIGTERM and the end of the stop, in each process.
    Frozen objects are left out of them; the exit is otherwise the usual
    one (atexit handlers, logs flushed, exit status).
    """
    gc.freeze()
