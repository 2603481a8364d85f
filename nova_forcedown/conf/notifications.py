"""[notifications] options: which notifications are sent, and where.

The transport is oslo.messaging's, configured in its own groups:
``[oslo_messaging_notifications] driver`` (e.g. ``messagingv2``) and
``transport_url`` (falling back to ``[DEFAULT] transport_url``). oslo.messaging
registers those options itself when a transport is made; the configuration
generator lists them under its ``oslo.messaging`` namespace.
"""

from oslo_config import cfg

GROUP = 'notifications'

VERSIONED = ('versioned', 'both')

NOTIFICATION_OPTS = [
    cfg.StrOpt('notification_format', default='unversioned',
               choices=[('unversioned', 'Send no notification: this service '
                                        'has no legacy (unversioned) '
                                        'notifications. The default, as in '
                                        'Nova.'),
                        ('versioned', 'Send versioned notifications.'),
                        ('both', 'The same as versioned here.')],
               help='Which notification format to send. service.create, '
                    'service.update, service.delete and the aggregate.* '
                    'notifications (create, delete, add_host, remove_host, '
                    'update_metadata, update_prop; each .start and .end) '
                    'are versioned notifications, so they are sent only '
                    'with versioned or both, and only when '
                    '[oslo_messaging_notifications] driver names a driver '
                    '(e.g. messagingv2).'),
    cfg.StrOpt('notify_on_state_change',
               choices=[(None, 'No instance.update notification.'),
                        ('vm_state', 'instance.update when a server\'s '
                                     'vm_state changes.'),
                        ('vm_and_task_state',
                         'instance.update when its vm_state or task_state '
                         'changes.')],
               help='When to send instance.update, as in Nova (default: '
                    'never). lock, unlock and the power actions send '
                    'their own notifications whatever this says.'),
    cfg.ListOpt('versioned_notifications_topics',
                default=['versioned_notifications'],
                help='Topics the versioned notifications are sent to; a '
                     'consumer reads the queue <topic>.info.'),
]


def register_opts(conf):
    conf.register_opts(NOTIFICATION_OPTS, group=GROUP)


def versioned_enabled(conf):
    return conf.notifications.notification_format in VERSIONED


def state_change_notified(conf, before, after):
    """Whether ``before`` -> ``after`` is worth an instance.update.

    As ``notify_on_state_change`` says.
    """
    wanted = conf.notifications.notify_on_state_change
    if wanted is None:
        return False
    if before.vm_state != after.vm_state:
        return True
    return (wanted == 'vm_and_task_state' and
            before.task_state != after.task_state)


def list_opts():
    return {GROUP: NOTIFICATION_OPTS}
