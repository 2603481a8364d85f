"""Versioned notifications about services, host aggregates and instances.

Each process that changes services or aggregates configures this module
once at start-up with :func:`configure` (the API app when it is built, the
compute agent and ``nova-forcedown-manage`` in their ``main``), like the
database. The Service object then calls :func:`service_changed` after each
committed change that an operator or a fault monitor cares about; the
Aggregate object calls :func:`aggregate_changed` before each change
(``start``) and after its commit (``end``), as Nova does. The module holds
the sender rather than the request context because the objects' callers
(the API, the agent, the command line) have no other common place to carry
it, and a notification belongs to the process, not to one request.

Notifications are best effort: building and queueing one never raises and
never waits for the broker; see :mod:`.sender`.
"""

from oslo_log import log as logging

from nova_forcedown.conf import notifications as notifications_conf
from nova_forcedown.notifications import payload as payload_mod
from nova_forcedown.notifications import sender as sender_mod

LOG = logging.getLogger(__name__)

_STATE = {'conf': None, 'sender': None}


def configure(conf):
    """Send notifications as ``conf`` says, from now on, in this process.

    Cheap and idempotent: nothing connects until the first notification.
    With ``[notifications] notification_format = unversioned`` (the default)
    nothing is ever sent.
    """
    if _STATE['conf'] is conf:
        return
    reset()
    _STATE['conf'] = conf
    if notifications_conf.versioned_enabled(conf):
        _STATE['sender'] = sender_mod.Sender(conf)
        LOG.info('Versioned notifications are sent to topic(s) %s.',
                 ', '.join(conf.notifications.versioned_notifications_topics))


def reset():
    """Stop sending (tests); queued notifications are flushed first."""
    sender = _STATE['sender']
    _STATE.update(conf=None, sender=None)
    if sender is not None:
        sender.flush()


def enabled():
    return _STATE['sender'] is not None


def service_changed(context, service, action):
    """Notify ``service.<action>`` for a committed change of ``service``.

    ``action`` is ``create``, ``update`` or ``delete``. Does nothing unless
    versioned notifications are enabled; a failure is logged, not raised.
    """
    _send(context,
          lambda: payload_mod.ServiceStatusNotification(service, action),
          lambda: 'service.%s notification of %s on %s' % (
              action, getattr(service, 'binary', None),
              getattr(service, 'host', None)))


def aggregate_changed(context, aggregate, action, phase):
    """Notify ``aggregate.<action>.<phase>`` of ``aggregate``.

    ``phase`` is ``start``, before the change is tried, or ``end``, once it
    is committed. Does nothing unless versioned notifications are enabled;
    a failure is logged, not raised.
    """
    _send(context,
          lambda: payload_mod.AggregateNotification(
              aggregate, action, phase, _STATE['conf'].host),
          lambda: 'aggregate.%s.%s notification of aggregate %s' % (
              action, phase, getattr(aggregate, 'name', None)))


def instance_changed(context, before, after, action=None, phase=None):
    """Notify an API change of a server, once it is committed.

    ``instance.<action>`` (lock, unlock, reset_state), or
    ``instance.<action>.<phase>`` (power_off.end when a host-wide
    operation marks a fenced host's server shut down), when ``action`` is
    given; and ``instance.update`` when ``[notifications]
    notify_on_state_change`` asks for a change of these states
    (``before``, ``after``: the server records on either side of the
    change). From nova-api, as in Nova.
    """
    conf = _STATE['conf']
    if _STATE['sender'] is None:
        return
    if action is not None:
        event = action if phase is None else '%s.%s' % (action, phase)
        _send(context,
              lambda: payload_mod.InstanceActionNotification(
                  after, context, action, phase, payload_mod.API_SOURCE,
                  conf.host),
              lambda: 'instance.%s notification of %s' % (event,
                                                          after.uuid))
    _maybe_update(context, before, after, payload_mod.API_SOURCE, conf.host)


def instance_power(context, instance, action, phase):
    """Notify ``instance.<action>.<phase>`` (power_off, power_on).

    From the server's host, as its nova-compute does.
    """
    _send(context,
          lambda: payload_mod.InstanceActionNotification(
              instance, context, action, phase, payload_mod.COMPUTE_SOURCE,
              instance.host),
          lambda: 'instance.%s.%s notification of %s' % (action, phase,
                                                         instance.uuid))


def instance_create(context, instance, phase, error=None, tags_of=None):
    """Notify ``instance.create.<phase>`` of a build on the server's host.

    ``start`` before the host builds it, ``end`` once it is active, and
    ``error`` (priority ERROR, ``error`` as its fault) each time a host's
    build of it failed, before it is retried elsewhere, as Nova's
    nova-compute does. The payload is Nova's InstanceCreatePayload;
    ``tags_of()`` gives the server's tags, read only when notifications
    are on.
    """
    _send(context,
          lambda: payload_mod.InstanceCreateNotification(
              instance, context, phase, error=error,
              tags=tags_of() if tags_of is not None else ()),
          lambda: 'instance.create.%s notification of %s' % (
              phase, instance.uuid))


def instance_task_ended(context, before, after):
    """Notify ``instance.update`` for a task the host ended, if asked."""
    if _STATE['sender'] is not None:
        _maybe_update(context, before, after, payload_mod.COMPUTE_SOURCE,
                      after.host)


def _maybe_update(context, before, after, source, host):
    changed = notifications_conf.state_change_notified(
        _STATE['conf'], before, after)
    if changed:
        _send(context,
              lambda: payload_mod.InstanceUpdateNotification(
                  before, after, context, source, host),
              lambda: 'instance.update notification of %s' % after.uuid)


def _send(context, build, describe):
    """Queue the notification ``build()`` makes, if notifications are on.

    A failure to build or queue it is logged with ``describe()``, never
    raised: the change it reports is already committed.
    """
    sender = _STATE['sender']
    if sender is None:
        return
    try:
        notification = build()
        sender.send(_context_dict(context), notification.event_type,
                    notification.publisher_id,
                    notification.payload.to_wire(),
                    priority=notification.priority)
    except Exception:
        LOG.exception('Could not build the %s.', describe())


def flush(timeout=sender_mod.EXIT_FLUSH_TIMEOUT):
    """Wait (at most ``timeout`` s) until queued notifications are sent."""
    sender = _STATE['sender']
    return True if sender is None else sender.flush(timeout)


def _context_dict(context):
    """The request context for the envelope, without credentials.

    Nova sends its context whole; tokens are left out here because a
    notification consumer has no use for them and should never see them.
    """
    if context is None:
        return {}
    return {key: value for key, value in context.to_dict().items()
            if 'token' not in key}
