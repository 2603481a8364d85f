"""Casts to the agents, from one background thread per process.

A cast is a hint that a task waits, sent after its record is committed:
the request that recorded it never waits for the broker. While the broker
is away each cast fails after :data:`compute.CAST_RETRY` retries; that is
logged when it starts and ends (and reminded while it lasts), and the
agents find the tasks at their next look.
"""

import time

from oslo_log import log as logging

from nova_forcedown import condition_log
from nova_forcedown import messaging
from nova_forcedown.rpc import compute
from nova_forcedown.rpc import transport

LOG = logging.getLogger(__name__)

BROKER_DOWN = condition_log.Messages(
    level=logging.WARNING,
    started='Cannot tell the agents of their tasks, the message broker is '
            'unavailable (%(error)s); they find them in the database within '
            '[DEFAULT] task_reconcile_interval (%(interval)s s).',
    reminder='Still cannot tell the agents of their tasks after %(seconds)d '
             's (%(error)s).',
    ended='Recovered: the agents are told of their tasks again, after '
          '%(seconds)d s.')


class Caster(messaging.Outbox):
    """Queue casts and send them in the background."""

    what = 'cast(s) to agents'
    thread_name = 'rpc-casts'

    def __init__(self, conf, clock=time.monotonic):
        super().__init__(conf)
        self._broker_down = condition_log.ConditionLog(
            LOG, BROKER_DOWN, conf.log_reminder_interval, clock)

    def cast(self, context, server, method, instance_uuid):
        """Queue ``method`` for the agent listening as ``server``."""
        self.put((context, server, method, instance_uuid),
                 '%s of %s to %s' % (method, instance_uuid, server))

    def _open(self):
        try:
            return compute.ComputeAPI(transport.get_transport(self._conf))
        except Exception as exc:
            LOG.error('Tasks are not cast to the agents: cannot set up the '
                      'RPC transport: %s', exc)
            return None

    def _deliver(self, api, item):
        context, server, method, instance_uuid = item
        try:
            getattr(api, method)(context, server, instance_uuid)
        except Exception as exc:
            error = '%s: %s' % (type(exc).__name__, exc)
        else:
            error = None
        if error is None:
            self._broker_down.update([])
        else:
            self._broker_down.update(
                ['broker'], error=error,
                interval=self._conf.task_reconcile_interval)
