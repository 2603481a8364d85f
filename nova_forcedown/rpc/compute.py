"""The compute RPC API: what the API tells a host's agent, and its versions.

The API casts one message per task it recorded (a stop, a start, the
rebuild of an evacuated server), once the transaction that recorded it
has committed, to the topic ``compute`` at the RPC server the host's
agent listens as: the host itself, as in Nova (``compute.<host>``),
unless one agent serves many simulated hosts; it then listens once, as
its first host, which each of its services records in ``rpc_server``.

A cast names the server only. The database stays the record of what was
asked: the agent reads the task there, so a duplicate cast does nothing
more, and one lost (a broker restart, an agent restarting) is found by
the agent's next look (``[DEFAULT] task_reconcile_interval``).

Versions:

* 1.0 - stop_instance, start_instance, rebuild_instance (instance_uuid)
* 1.1 - build_and_run_instance, terminate_instance (instance_uuid)
"""

from nova_forcedown import messaging
from nova_forcedown.rpc import transport

TOPIC = 'compute'

# The newest version this client sends and the agent's manager takes.
VERSION = '1.1'

# The RPC methods, one per task.
STOP = 'stop_instance'
START = 'start_instance'
REBUILD = 'rebuild_instance'
BUILD = 'build_and_run_instance'
TERMINATE = 'terminate_instance'
METHODS = (STOP, START, REBUILD, BUILD, TERMINATE)
# The version each method came in; an older agent finds the task at its
# next look instead.
_SINCE = {BUILD: '1.1', TERMINATE: '1.1'}

# Connection retries of one cast: a broker that is away costs a cast
# about a second, then the agent's next look finds the task.
CAST_RETRY = 1


def target(server=None):
    """The oslo.messaging Target of the compute topic (at ``server``)."""
    return messaging.import_messaging().Target(topic=TOPIC, server=server,
                                               version=VERSION)


class ComputeAPI:
    """The client: one cast per task, to the agent listening as ``server``."""

    def __init__(self, rpc_transport, retry=CAST_RETRY):
        self._client = messaging.import_messaging().get_rpc_client(
            rpc_transport, target(), serializer=transport.serializer(),
            retry=retry)

    def stop_instance(self, context, server, instance_uuid):
        self._cast(context, server, STOP, instance_uuid)

    def start_instance(self, context, server, instance_uuid):
        self._cast(context, server, START, instance_uuid)

    def rebuild_instance(self, context, server, instance_uuid):
        self._cast(context, server, REBUILD, instance_uuid)

    def build_and_run_instance(self, context, server, instance_uuid):
        self._cast(context, server, BUILD, instance_uuid)

    def terminate_instance(self, context, server, instance_uuid):
        self._cast(context, server, TERMINATE, instance_uuid)

    def _cast(self, context, server, method, instance_uuid):
        self._client.prepare(server=server,
                             version=_SINCE.get(method, '1.0')).cast(
            context, method, instance_uuid=instance_uuid)
