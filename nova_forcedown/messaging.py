"""oslo.messaging in this project: imported quietly, sent from one thread.

Notifications and the casts that tell agents of their tasks are both best
effort: the change they follow is committed, so sending must never fail
it nor slow it. An :class:`Outbox` puts each message on a bounded
in-memory queue, never waiting; one thread per process hands them to
oslo.messaging, which connects to the broker and retries as its options
say. The thread and the transport are made in the process that sends, on
its first message: the API server forks its workers after the app is
loaded, and neither threads nor broker connections survive a fork.
"""

import atexit
import importlib
import logging as std_logging
import os
import queue
import threading
import warnings

from oslo_log import log as logging

LOG = logging.getLogger(__name__)

# Messages waiting for the broker; about 1 KiB each.
MAX_QUEUED = 10000

# Seconds a process that exits waits for its queued messages.
EXIT_FLUSH_TIMEOUT = 5.0

_STOP = object()

# The logger of oslo.messaging's notification driver, which logs a failed
# send with its traceback and the whole payload.
NOTIFY_DRIVER_LOGGER = 'oslo_messaging.notify.messaging'


def import_messaging():
    """oslo_messaging, imported only where a broker is configured.

    Its import pulls in oslo.service's eventlet back end, whose deprecation
    warnings are noise here: nothing in this project uses eventlet.
    """
    with warnings.catch_warnings():
        warnings.simplefilter('ignore', DeprecationWarning)
        import oslo_messaging
    return oslo_messaging


# Options oslo.messaging's RPC client reads but registers only on the
# global cfg.CONF and lists nowhere (its own ConfFixture imports them
# alike): (module, list, group).
_CLIENT_ONLY_OPTS = (
    ('oslo_messaging._metrics.client', 'oslo_messaging_metrics',
     'oslo_messaging_metrics'),
    ('oslo_messaging._tracing.client', 'oslo_messaging_tracing',
     'oslo_messaging_tracing'),
)


def register_transport_opts(conf):
    """Register the oslo.messaging options an RPC client reads on ``conf``.

    oslo.messaging registers its transport options when a transport is
    made, but not all those its RPC client reads; this project has a
    ConfigOpts of its own, not the global one.
    """
    with warnings.catch_warnings():
        warnings.simplefilter('ignore', DeprecationWarning)
        from oslo_messaging import opts
    for group, options in opts.list_opts():
        if group is None:
            conf.register_opts(options)
    for module, name, group in _CLIENT_ONLY_OPTS:
        try:
            options = getattr(importlib.import_module(module), name)
        except (ImportError, AttributeError):
            continue  # an oslo.messaging that does not read them
        conf.register_opts(options, group=group)


class Outbox:
    """Queue messages and hand them to oslo.messaging in the background.

    A subclass says what it sends through: :meth:`_open` makes it (None
    when it cannot, having logged why), :meth:`_deliver` sends one item.
    ``what`` names the messages in the log lines.
    """

    what = 'message(s)'
    thread_name = 'outbox'

    def __init__(self, conf, max_queued=MAX_QUEUED):
        self._conf = conf
        self._max_queued = max_queued
        self._lock = threading.Lock()
        self._pid = None
        self._queue = None
        self._thread = None
        self._dropped = 0
        self._flush_at_exit = False

    def put(self, item, description):
        """Queue ``item``; never blocks, never raises.

        ``description`` says which message a full queue dropped.
        """
        try:
            self._started().put_nowait(item)
        except queue.Full:
            self._dropped += 1
            if self._dropped == 1 or self._dropped % 1000 == 0:
                LOG.warning('%(count)d %(what)s dropped: %(max)d are '
                            'already waiting for the message broker. Latest: '
                            '%(latest)s.',
                            {'count': self._dropped, 'what': self.what,
                             'max': self._max_queued, 'latest': description})

    def flush(self, timeout=EXIT_FLUSH_TIMEOUT):
        """Send what is queued, waiting at most ``timeout`` seconds.

        Returns True when everything was handed to oslo.messaging. The
        thread stops; a later :meth:`put` starts a new one.
        """
        with self._lock:
            if self._pid != os.getpid() or not self._thread.is_alive():
                return True
            thread, pending = self._thread, self._queue
            self._pid = None
        try:
            pending.put(_STOP, timeout=timeout)
        except queue.Full:
            pass
        thread.join(timeout)
        if thread.is_alive():
            LOG.warning('%(count)d %(what)s not sent: the message broker did '
                        'not take them within %(timeout)s s.',
                        {'count': pending.qsize(), 'what': self.what,
                         'timeout': timeout})
            return False
        return True

    def _started(self):
        if self._pid == os.getpid():
            return self._queue
        with self._lock:
            if self._pid != os.getpid():
                self._queue = queue.Queue(self._max_queued)
                self._thread = threading.Thread(
                    target=self._run, args=(self._queue,),
                    name=self.thread_name, daemon=True)
                self._thread.start()
                self._pid = os.getpid()
                if not self._flush_at_exit:
                    atexit.register(self.flush)
                    self._flush_at_exit = True
        return self._queue

    def _run(self, pending):
        through = self._open()
        while True:
            item = pending.get()
            if item is _STOP:
                return
            if through is not None:
                self._deliver(through, item)

    def _open(self):
        raise NotImplementedError()

    def _deliver(self, through, item):
        raise NotImplementedError()


class _OneLineSendError(std_logging.Filter):
    """A failed send as one line: the topic and the error, nothing more.

    The record keeps no traceback; oslo.log's formatter still ends the
    line with the error being handled (its "error summary").
    """

    def filter(self, record):
        if not record.exc_info:
            return True
        topic = (record.args.get('topic')
                 if isinstance(record.args, dict) else None)
        record.msg = 'Could not send a notification to %s'
        record.args = (topic or 'the broker',)
        record.exc_info = None
        record.exc_text = None
        return True


def one_line_send_errors():
    """Make each failed notification send one log line.

    The change it reports was made and stands; the operator needs to know
    that its notification was lost and why, not sixty lines of traceback
    and payload for each (a fence storm with the broker away sends
    hundreds).
    """
    logger = std_logging.getLogger(NOTIFY_DRIVER_LOGGER)
    if not any(isinstance(f, _OneLineSendError) for f in logger.filters):
        logger.addFilter(_OneLineSendError())
