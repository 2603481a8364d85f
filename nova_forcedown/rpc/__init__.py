"""Tasks told to the agents over oslo.messaging, when a transport is set.

Each process that records tasks configures this module once at start-up
with :func:`configure` (the API app when it is built), as it does the
database and notifications. The server operations then call
:func:`cast` after each committed task. Without ``[DEFAULT]
transport_url`` nothing is cast: the agents look for their tasks in the
database every ``task_poll_interval``.
"""

from oslo_log import log as logging

from nova_forcedown.rpc import caster as caster_mod
from nova_forcedown.rpc import transport

LOG = logging.getLogger(__name__)

_STATE = {'conf': None, 'caster': None}


def configure(conf):
    """Cast tasks as ``conf`` says, from now on, in this process.

    Cheap and idempotent: nothing connects until the first cast. Says
    once in the log which mode is in use.
    """
    if _STATE['conf'] is conf:
        return
    reset()
    _STATE['conf'] = conf
    if transport.enabled(conf):
        _STATE['caster'] = caster_mod.Caster(conf)
        LOG.info('Tasks are cast to the compute agents over RPC (%s).',
                 transport.shown_url(conf))
    else:
        LOG.info('No [DEFAULT] transport_url: the compute agents look for '
                 'their tasks in the database every task_poll_interval '
                 '(%s s).', conf.task_poll_interval)


def reset():
    """Stop casting (tests); queued casts are sent first."""
    caster = _STATE['caster']
    _STATE.update(conf=None, caster=None)
    if caster is not None:
        caster.flush()


def enabled():
    return _STATE['caster'] is not None


def cast(context, server, method, instance_uuid):
    """Tell the agent listening as ``server`` of ``instance_uuid``'s task.

    ``method``: one of :data:`compute.METHODS`. Never blocks, never raises.
    """
    if _STATE['caster'] is not None:
        _STATE['caster'].cast(context, server, method, instance_uuid)
