"""The agent's side of the compute RPC API: its manager and its server.

One RPC server per agent, whatever its number of hosts: it listens as the
agent's first host (``compute.<host>``, Nova's queue when the agent serves
one host), and each of its services records that name in ``rpc_server``
so that the API casts there. A fake agent of a thousand hosts is then one
queue, one connection and one listening thread, not a thousand.

A cast only wakes the task runner for the server it names; the runner
reads the task from the database and carries it out, as it does the tasks
it finds at its own looks.
"""

import threading

from oslo_log import log as logging

from nova_forcedown import exception
from nova_forcedown import messaging
from nova_forcedown.rpc import compute as rpc_compute
from nova_forcedown.rpc import transport

LOG = logging.getLogger(__name__)

# Threads that take the casts off the queue: each only wakes the runner.
EXECUTOR_THREADS = 4

# Seconds a stop waits for a listener that is still connecting.
START_WAIT = 2


class ComputeManager:
    """The endpoint the casts call, at :data:`rpc_compute.VERSION`."""

    def __init__(self, runner):
        self.target = messaging.import_messaging().Target(
            version=rpc_compute.VERSION)
        self._runner = runner

    def stop_instance(self, context, instance_uuid):
        """The API recorded a stop of ``instance_uuid``."""
        self._runner.wake(instance_uuid)

    def start_instance(self, context, instance_uuid):
        """The API recorded a start of ``instance_uuid``."""
        self._runner.wake(instance_uuid)

    def rebuild_instance(self, context, instance_uuid):
        """The API evacuated ``instance_uuid`` to one of this agent's hosts."""
        self._runner.wake(instance_uuid)

    def build_and_run_instance(self, context, instance_uuid):
        """The API placed a new server on one of this agent's hosts."""
        self._runner.wake(instance_uuid)

    def terminate_instance(self, context, instance_uuid):
        """The API recorded the deletion of ``instance_uuid``."""
        self._runner.wake(instance_uuid)


class Listener:
    """The agent's RPC server, listening as ``server`` for ``runner``.

    It starts in a thread of its own: oslo.messaging waits for the broker
    before it returns, and the agent carries out its tasks meanwhile (its
    runner looks every ``task_reconcile_interval``).
    """

    def __init__(self, conf, server, runner):
        oslo_messaging = messaging.import_messaging()
        transport.register_opts(conf)
        conf.set_default('executor_thread_pool_size', EXECUTOR_THREADS)
        self._transport = transport.get_transport(conf)
        self._server = oslo_messaging.get_rpc_server(
            self._transport, rpc_compute.target(server),
            [ComputeManager(runner)], executor='threading',
            serializer=transport.serializer(),
            access_policy=oslo_messaging.DefaultRPCAccessPolicy)
        self._lock = threading.Lock()
        self._started = False
        self._stopped = False
        self._starting = threading.Thread(target=self._start,
                                          name='rpc-listener', daemon=True)
        self._where = {'topic': rpc_compute.TOPIC, 'server': server,
                       'url': transport.shown_url(conf),
                       'interval': conf.task_reconcile_interval}
        LOG.info('Tasks are told over RPC at %(topic)s.%(server)s (%(url)s); '
                 'the database is looked at every %(interval)s s besides.',
                 self._where)

    def start(self):
        self._starting.start()
        return self

    def stop(self, timeout=START_WAIT):
        """Stop listening; casts not yet taken stay queued for the next.

        A listener still waiting for the broker after ``timeout`` seconds
        stops as soon as it has started, so it never takes a cast meant
        for whoever listens after it.
        """
        if self._starting.is_alive():
            self._starting.join(timeout)
        with self._lock:
            shut_now = self._started and not self._stopped
            self._stopped = True
        if shut_now:
            self._shut()

    def _start(self):
        refused = None
        try:
            self._server.start()
        except Exception as exc:  # noqa: the thread's one line says it
            refused = exc
        if refused is not None:
            self._refused(refused)
            return
        with self._lock:
            self._started = True
            stopped = self._stopped
        if stopped:
            self._shut()

    def _refused(self, exc):
        """The broker refused the listener: one line, and no listening.

        oslo.messaging waits for a broker that is down, but gives up at
        once on one that refuses it (credentials, virtual host). Logged out
        of the except block, which oslo.log would append in full.
        """
        LOG.error('Cannot listen for tasks at %(topic)s.%(server)s on '
                  '%(url)s: %(error)s. Fix [DEFAULT] transport_url and '
                  'restart the agent; until then its tasks are found in the '
                  'database every %(interval)s s.',
                  dict(self._where,
                       error=exception.first_line(exc).rstrip('.')))
        self._transport.cleanup()

    def _shut(self):
        self._server.stop()
        self._server.wait()
        self._transport.cleanup()
