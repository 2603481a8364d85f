"""Best-effort delivery of notifications from one background thread.

A request only puts a small dict on a bounded in-memory queue, never waiting:
when the queue is full the notification is dropped and a warning is logged.
One thread per process takes them off the queue and hands them to
oslo.messaging, which connects to the broker and retries as
``[oslo_messaging_rabbit]`` and ``[oslo_messaging_notifications] retry`` say
(its connection errors are logged by oslo.messaging). So a broker that is
down, slow or misconfigured never fails or slows the change that is being
notified.

The thread, the transport and the queue are made in the process that sends,
on its first notification: the API server forks its workers after the app is
loaded, and neither threads nor broker connections survive a fork.
"""

import atexit
import os
import queue
import threading
import warnings

from oslo_log import log as logging

LOG = logging.getLogger(__name__)

# Notifications waiting for the broker; about 1 KiB each.
MAX_QUEUED = 10000

# Seconds a process that exits waits for its queued notifications.
EXIT_FLUSH_TIMEOUT = 5.0

_STOP = object()


def import_messaging():
    """oslo_messaging, imported only when notifications are enabled.

    Its import pulls in oslo.service's eventlet back end, whose deprecation
    warnings are noise here: nothing in this project uses eventlet.
    """
    with warnings.catch_warnings():
        warnings.simplefilter('ignore', DeprecationWarning)
        import oslo_messaging
    return oslo_messaging


class Sender:
    """Queue notifications and send them in the background."""

    def __init__(self, conf, max_queued=MAX_QUEUED):
        self._conf = conf
        self._max_queued = max_queued
        self._lock = threading.Lock()
        self._pid = None
        self._queue = None
        self._thread = None
        self._dropped = 0
        self._flush_at_exit = False

    def send(self, context, event_type, publisher_id, payload):
        """Queue one notification; never blocks, never raises."""
        try:
            self._started().put_nowait(
                (context, event_type, publisher_id, payload))
        except queue.Full:
            self._dropped += 1
            if self._dropped == 1 or self._dropped % 1000 == 0:
                LOG.warning('%(count)d notification(s) dropped: %(max)d are '
                            'already waiting for the message broker. Latest: '
                            '%(event)s from %(publisher)s.',
                            {'count': self._dropped, 'max': self._max_queued,
                             'event': event_type, 'publisher': publisher_id})

    def flush(self, timeout=EXIT_FLUSH_TIMEOUT):
        """Send what is queued, waiting at most ``timeout`` seconds.

        Returns True when everything was handed to oslo.messaging. The
        thread stops; a later :meth:`send` starts a new one.
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
            LOG.warning('%d notification(s) not sent: the message broker did '
                        'not take them within %s s.', pending.qsize(),
                        timeout)
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
                    name='notifications', daemon=True)
                self._thread.start()
                self._pid = os.getpid()
                if not self._flush_at_exit:
                    atexit.register(self.flush)
                    self._flush_at_exit = True
        return self._queue

    def _run(self, pending):
        notifier = self._notifier()
        while True:
            item = pending.get()
            if item is _STOP:
                return
            if notifier is not None:
                self._deliver(notifier, *item)

    def _notifier(self):
        """oslo.messaging's Notifier, or None (logged) if there is none."""
        try:
            messaging = import_messaging()
            transport = messaging.get_notification_transport(self._conf)
            notifier = messaging.Notifier(
                transport, publisher_id='nova-forcedown',
                topics=self._conf.notifications.versioned_notifications_topics)
        except Exception as exc:
            LOG.error('Notifications are not sent: cannot set up the '
                      'notification transport: %s', exc)
            return None
        if not notifier.is_enabled():
            LOG.warning('Notifications are not sent: [notifications] '
                        'notification_format is %s but '
                        '[oslo_messaging_notifications] driver is not set '
                        '(e.g. messagingv2).',
                        self._conf.notifications.notification_format)
            return None
        return notifier

    @staticmethod
    def _deliver(notifier, context, event_type, publisher_id, payload):
        try:
            notifier.prepare(publisher_id=publisher_id).info(
                context, event_type, payload)
        except Exception:
            LOG.exception('Could not send %(event)s from %(publisher)s.',
                          {'event': event_type, 'publisher': publisher_id})
