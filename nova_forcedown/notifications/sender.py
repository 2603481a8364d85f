"""Best-effort delivery of notifications from one background thread.

A request only puts a small dict on a bounded in-memory queue, never waiting:
when the queue is full the notification is dropped and a warning is logged.
One thread per process takes them off the queue and hands them to
oslo.messaging, which connects to the broker and retries as
``[oslo_messaging_rabbit]`` and ``[oslo_messaging_notifications] retry`` say
(its connection errors are logged by oslo.messaging). So a broker that is
down, slow or misconfigured never fails or slows the change that is being
notified.

The queue and its thread are :class:`nova_forcedown.messaging.Outbox`'s.
"""

from oslo_log import log as logging

from nova_forcedown import messaging
from nova_forcedown.notifications import payload as payload_mod

LOG = logging.getLogger(__name__)

# Seconds a process that exits waits for its queued notifications.
EXIT_FLUSH_TIMEOUT = messaging.EXIT_FLUSH_TIMEOUT


class Sender(messaging.Outbox):
    """Queue notifications and send them in the background."""

    what = 'notification(s)'
    thread_name = 'notifications'

    def send(self, context, event_type, publisher_id, payload,
             priority=payload_mod.PRIORITY_INFO):
        """Queue one notification; never blocks, never raises.

        ``priority``: INFO, or ERROR for an action that failed.
        """
        self.put((context, event_type, publisher_id, payload, priority),
                 '%s from %s' % (event_type, publisher_id))

    def _open(self):
        return self._notifier()

    def _notifier(self):
        """oslo.messaging's Notifier, or None (logged) if there is none."""
        try:
            oslo_messaging = messaging.import_messaging()
            transport = oslo_messaging.get_notification_transport(self._conf)
            notifier = oslo_messaging.Notifier(
                transport, publisher_id='nova-forcedown',
                topics=self._conf.notifications.versioned_notifications_topics)
        except Exception as exc:
            LOG.error('Notifications are not sent: cannot set up the '
                      'notification transport: %s', exc)
            return None
        # Notifier.is_enabled() is true for no driver at all, which sends
        # nowhere just the same.
        if not set(self._conf.oslo_messaging_notifications.driver) - {'noop'}:
            LOG.warning('Notifications are not sent: [notifications] '
                        'notification_format is %s but '
                        '[oslo_messaging_notifications] driver is not set '
                        '(e.g. messagingv2).',
                        self._conf.notifications.notification_format)
            return None
        messaging.one_line_send_errors()
        return notifier

    def _deliver(self, notifier, item):
        context, event_type, publisher_id, payload, priority = item
        try:
            send = getattr(notifier.prepare(publisher_id=publisher_id),
                           priority.lower())
            send(context, event_type, payload)
        except Exception:
            LOG.exception('Could not send %(event)s from %(publisher)s.',
                          {'event': event_type, 'publisher': publisher_id})
