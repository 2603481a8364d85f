"""Print notifications as they arrive: ``nova-forcedown-manage notifications
listen``.

The listener reads a private copy of the notifications: an exclusive queue,
deleted by the broker when the listener goes, bound to the topics'
``<topic>.<priority>`` routing keys on the notification exchange. It never
takes a message away from another consumer (an oslo.messaging listener
without a pool would compete for the ``<topic>.info`` queue; with a pool it
would leave a durable queue behind that keeps filling). It therefore speaks
AMQP through kombu, which oslo.messaging's rabbit driver uses, and supports
``rabbit://`` transport URLs only.
"""

import json
import threading

from oslo_config import cfg

from nova_forcedown import messaging as nf_messaging

# The priorities oslo.messaging puts in routing keys, lower case.
PRIORITIES = ('audit', 'critical', 'debug', 'error', 'info', 'sample',
              'warn')

# Seconds between two checks of the stop event while waiting for messages.
_POLL = 0.5


class ListenError(Exception):
    """The listener cannot run; printed as one line."""


def broker_urls(conf):
    """kombu URLs of the notification transport and a printable one."""
    messaging = nf_messaging.import_messaging()
    transport = messaging.get_notification_transport(conf)
    transport.cleanup()
    configured = (conf.oslo_messaging_notifications.transport_url or
                  _set_by_the_operator(conf, 'transport_url'))
    if not configured:
        # oslo.messaging would use its default broker (rabbit://), where
        # the services of this configuration send nothing.
        raise ListenError('no transport_url is set ([oslo_messaging_'
                          'notifications] or [DEFAULT]): the services of '
                          'this configuration send no notifications; set '
                          'the transport_url they use')
    url = messaging.TransportURL.parse(conf, configured)
    if url.transport not in ('rabbit', 'kombu', 'amqp'):
        raise ListenError('notifications listen supports rabbit:// '
                          'transport URLs only, not %s://' % url.transport)
    hosts = url.hosts or [messaging.TransportHost(hostname='localhost')]
    vhost = url.virtual_host or ''
    full, shown = [], []
    for host in hosts:
        netloc = '%s:%s' % (host.hostname or 'localhost', host.port or 5672)
        credentials = '%s:%s@' % (host.username or 'guest',
                                  host.password or 'guest')
        full.append('amqp://%s%s/%s' % (credentials, netloc, vhost))
        shown.append('amqp://%s/%s' % (netloc, vhost))
    return ';'.join(full), ';'.join(shown)


def _set_by_the_operator(conf, name):
    """``[DEFAULT] name`` where a file or the command line set it."""
    location = conf.get_location(name)
    if location is None or location.location == cfg.Locations.opt_default:
        return None
    return conf[name]


def decode(body):
    """The oslo.messaging message of an AMQP body (envelope 2.0 or none)."""
    if isinstance(body, (bytes, str)):
        body = json.loads(body)
    if 'oslo.message' in body:
        return json.loads(body['oslo.message'])
    return body


def format_event(message):
    """Two lines: when, priority, event type, publisher; then the payload.

    A Nova-style versioned payload is shown as its name, version and data
    as one line of compact JSON with sorted keys.
    """
    header = '%s %s %s %s' % (message.get('timestamp', '-'),
                              message.get('priority', '-'),
                              message.get('event_type', '-'),
                              message.get('publisher_id', '-'))
    payload = message.get('payload')
    if isinstance(payload, dict) and 'nova_object.data' in payload:
        detail = '%s %s %s' % (payload.get('nova_object.name'),
                               payload.get('nova_object.version'),
                               _compact(payload['nova_object.data']))
    else:
        detail = _compact(payload)
    return '%s\n    %s' % (header, detail)


def _compact(value):
    return json.dumps(value, sort_keys=True, separators=(',', ':'),
                      default=str)


def listen(conf, topics, out, stop=None, ready=None):
    """Print each notification on ``topics`` to ``out`` until ``stop``.

    ``stop`` is a threading.Event (Ctrl-C also ends the loop, through
    KeyboardInterrupt); ``ready(shown_url)`` is called once the queue is
    bound, so that what is sent from then on is seen.
    """
    import kombu

    stop = stop or threading.Event()
    url, shown = broker_urls(conf)
    rabbit = conf.oslo_messaging_rabbit
    exchange = kombu.Exchange(conf.control_exchange, type='topic',
                              durable=rabbit.amqp_durable_queues,
                              auto_delete=rabbit.amqp_auto_delete)
    bindings = [kombu.binding(exchange, routing_key='%s.%s' % (topic, level))
                for topic in topics for level in PRIORITIES]
    queue = kombu.Queue(exclusive=True, auto_delete=True, durable=False,
                        bindings=bindings)

    def on_message(body, message):
        try:
            text = format_event(decode(body))
        except (ValueError, TypeError, AttributeError) as exc:
            text = 'unreadable message: %s' % exc
        print(text, file=out, flush=True)
        message.ack()

    with kombu.Connection(url, connect_timeout=5) as connection:
        try:
            connection.ensure_connection(max_retries=1)
        except connection.connection_errors + (OSError,) as exc:
            raise ListenError('cannot connect to %s: %s' % (shown, exc))
        with connection.Consumer(queue, callbacks=[on_message],
                                 accept=['json']):
            if ready is not None:
                ready(shown)
            while not stop.is_set():
                try:
                    connection.drain_events(timeout=_POLL)
                except TimeoutError:
                    pass
