"""The agent carries out the power tasks the API recorded for its hosts.

The database is the record: the API sets a server's task_state
(powering-off, powering-on, rebuilding) and records the action in one
transaction. Without RPC, each agent looks every ``task_poll_interval``
for the tasks of its hosts (one query per agent, whatever its number of
hosts). With RPC, the API's cast wakes the runner for that server (one
query for the servers named since the last look); the runner looks for
all its hosts' tasks when it starts, and every ``task_reconcile_interval``
the agent's database heartbeat reads which of them wait (in the
heartbeat's transaction: an idle agent makes no look of its own) and
wakes the runner for those, so a lost cast delays a task, never loses it.
Either way it has its driver do them, then ends each task (vm_state,
power_state, task_state cleared) and records the event, Success or
Error, as Nova's compute does. A task for a host whose agent is down
waits, and is done when the agent is back. Looks run one at a time, in
one thread, so a task read twice (a duplicate cast) is carried out once.
"""

import concurrent.futures
import threading

from oslo_log import log as logging
from oslo_serialization import jsonutils
from oslo_utils import timeutils

from nova_forcedown.compute.drivers import base as driver_base
from nova_forcedown import condition_log
from nova_forcedown import exception
from nova_forcedown import notifications
from nova_forcedown import periodic
from nova_forcedown.objects import host_tasks
from nova_forcedown.objects import instance as instance_obj
from nova_forcedown.objects import instance_build
from nova_forcedown.objects import instance_operations as operations
from nova_forcedown.rpc import compute as rpc_compute
from nova_forcedown.scheduler import host_selection

LOG = logging.getLogger(__name__)

# Tasks carried out at once: a hypervisor takes seconds to power a server
# off, and a fenced host's recovery stops and starts many.
WORKERS = 8

TASKS_DATABASE_DOWN = condition_log.Messages(
    level=logging.WARNING,
    started='Cannot look for tasks, the database is unavailable '
            '(%(error)s); retrying every %(interval)s s.',
    reminder='Still no task read after %(seconds)d s, the database is '
             'unavailable (%(error)s).',
    ended='Recovered: tasks are read again, after %(seconds)d s.')


class TaskRunner:
    """Carry out the waiting tasks of ``hosts`` with ``driver``.

    ``told``: whether casts tell of the tasks (RPC is on), so that the
    runner looks when it starts and when woken only, and
    :meth:`waiting_if_due` finds those whose cast was lost.
    """

    def __init__(self, context, driver, hosts, conf, clock, told=False,
                 on_rebuilt=None, servicegroup=None):
        self._context = context
        self._conf = conf
        # Which hosts are up, for a failed build's next host; None: a
        # failed build is not retried.
        self._servicegroup = servicegroup
        self._driver = driver
        # Called once a rebuild (and a clean-up after it) changed what the
        # hosts run.
        self._on_rebuilt = on_rebuilt or (lambda: None)
        self._hosts = list(hosts)
        self._told = told
        self._clock = clock
        self._interval = (conf.task_reconcile_interval if told
                          else conf.task_poll_interval)
        self._reconcile_at = clock() + self._interval
        self._database_down = condition_log.ConditionLog(
            LOG, TASKS_DATABASE_DOWN, conf.log_reminder_interval, clock)
        self._ticker = None
        self._pool = None
        # uuids of the servers whose task a worker is carrying out, and
        # of those whose worker finished since the last look. A finished
        # task leaves the first set only when the next look starts, so a
        # look that read it before it ended cannot start it again.
        self._in_flight = set()
        self._finished = set()
        # uuids skipped by a look while in flight: their task may have
        # changed meanwhile (a delete of a server being built), and a cast
        # said so once already; looked for again as their worker ends.
        self._look_again = set()
        self._in_flight_lock = threading.Lock()

    def start(self):
        self._pool = concurrent.futures.ThreadPoolExecutor(
            WORKERS, thread_name_prefix='compute-task')
        if self._told:
            self._ticker = periodic.WhenWoken(self._look, None,
                                              'compute-tasks')
        else:
            self._ticker = periodic.Every(self._look, self._interval,
                                          'compute-tasks',
                                          run_immediately=False)
        self._ticker.start()

    def wake(self, *instance_uuids):
        """A cast said these servers have a task: look for them now."""
        for instance_uuid in instance_uuids:
            self._ticker.wake(instance_uuid)

    def waiting_if_due(self, context):
        """The servers whose tasks wait, once per task_reconcile_interval.

        Told over RPC only (a polling runner finds them itself): read in
        ``context``'s transaction, the agent's database heartbeat, which
        gives them to :meth:`take_waiting` once it committed. None when
        no look is due.
        """
        if not self._told or self._clock() < self._reconcile_at:
            return None
        return [server.uuid for server in
                operations.pending_tasks(context, self._hosts)]

    def take_waiting(self, uuids):
        """Carry out the tasks a due look found; the next is an interval on."""
        self._reconcile_at = self._clock() + self._interval
        self.wake(*uuids)

    def stop(self, timeout=5):
        if self._ticker is not None:
            self._ticker.stop(timeout)
        if self._pool is not None:
            self._pool.shutdown(wait=True, cancel_futures=True)

    def _look(self, uuids=None):
        try:
            self.run_pending(uuids)
        except Exception:
            # A bug must not end the loop: the next tasks still run.
            LOG.exception('Carrying out the waiting tasks failed.')

    def run_pending(self, uuids=None):
        """Carry out every task waiting now; the number started.

        ``uuids``: only those of these servers (None: all of the hosts').
        Without a pool (tests), one after the other before returning;
        with one, each in a worker, skipping those already under way.
        """
        with self._in_flight_lock:
            self._in_flight -= self._finished
            self._finished.clear()
        try:
            servers = operations.pending_tasks(self._context, self._hosts,
                                               uuids)
        except exception.DatabaseUnavailable as exc:
            outage = exception.first_line(exc)
        else:
            outage = None
        if outage is not None:
            self._database_down.update(['database'], error=outage,
                                       interval=self._interval)
            return 0
        self._database_down.update([])
        if self._pool is None:
            for server in servers:
                self.carry_out(server)
            return len(servers)
        started = 0
        for server in servers:
            with self._in_flight_lock:
                if server.uuid in self._in_flight:
                    self._look_again.add(server.uuid)
                    continue
                self._in_flight.add(server.uuid)
            self._pool.submit(self._carry_out_in_worker, server)
            started += 1
        return started

    def _carry_out_in_worker(self, server):
        try:
            self.carry_out(server)
        except Exception:
            LOG.exception('Carrying out task %(task)s of server %(uuid)s '
                          'failed.', {'task': server.task_state,
                                      'uuid': server.uuid})
        finally:
            with self._in_flight_lock:
                self._finished.add(server.uuid)
                again = server.uuid in self._look_again
                self._look_again.discard(server.uuid)
            if again and self._told:
                # A polling runner finds it at its next look anyway.
                self.wake(server.uuid)

    def carry_out(self, server):
        """Do the server's task through the driver and end it."""
        special = {operations.REBUILDING: self.rebuild,
                   operations.SPAWNING: self.spawn,
                   operations.DELETING: self.terminate}.get(
                       server.task_state)
        if special is not None:
            special(server)
            return
        task = operations.TASKS[server.task_state]
        context = self._context
        started = host_tasks.start(context, server)
        notifications.instance_power(context, server, task.notification,
                                     'start')
        try:
            power_state = getattr(self._driver, task.notification)(server)
        except driver_base.DriverError as exc:
            LOG.warning('Task %(task)s of server %(uuid)s failed: %(error)s',
                        {'task': server.task_state, 'uuid': server.uuid,
                         'error': exc})
            host_tasks.end(context, server, started, {},
                           failure=host_tasks.Failure.of(exc))
            return
        after = host_tasks.end(context, server, started, {
            'vm_state': task.vm_state, 'power_state': power_state})
        if after is None:
            LOG.info('Server %(uuid)s was %(task)s, but its task was '
                     'cleared meanwhile; its state is left as it is now.',
                     {'uuid': server.uuid, 'task': server.task_state})
            return
        notifications.instance_power(context, after, task.notification,
                                     'end')
        notifications.instance_task_ended(context, server, after)

    def spawn(self, server):
        """Build a server the API placed on this host, and run it.

        Active and running, launched now, with the ports the driver gave
        it. A driver's failure, notified as instance.create.error, leaves
        it in error with its fault, off the host (what it claimed there
        is released), unless it is retried on another host.
        """
        context = self._context
        started = host_tasks.start(context, server)

        def tags_of():
            return instance_obj.tags_of(context, [server]).get(server.uuid,
                                                               [])
        notifications.instance_create(context, server, 'start',
                                      tags_of=tags_of)
        try:
            power_state, ports = self._driver.spawn(server)
        except driver_base.DriverError as exc:
            notifications.instance_create(context, server, 'error',
                                          error=exc, tags_of=tags_of)
            self._build_failed(server, started, host_tasks.Failure.of(exc))
            return
        values = {'vm_state': operations.ACTIVE, 'power_state': power_state,
                  'launched_at': timeutils.utcnow()}
        if ports is not None:
            values['network_info'] = jsonutils.dumps(ports)
        after = host_tasks.end(context, server, started, values)
        if after is None:
            LOG.info('Server %(uuid)s was built, but its task was cleared '
                     'meanwhile; its state is left as it is now.',
                     {'uuid': server.uuid})
            return
        if ports is not None:
            after = after._replace(network_info=ports)
        notifications.instance_create(context, after, 'end',
                                      tags_of=tags_of)
        notifications.instance_task_ended(context, server, after)

    def _build_failed(self, server, started, failure):
        """Retry a failed build on another host, as Nova reschedules it.

        On a host the server's build was not tried on, up to ``[scheduler]
        max_attempts`` hosts in all; told to that host's agent. Without a
        servicegroup (no scheduler here) or once no retry is left, the
        server is in error.
        """
        context = self._context
        tried = instance_build.tried_hosts(context, server)
        attempts = self._conf.scheduler.max_attempts
        choices = None
        if self._servicegroup is not None and len(tried) < attempts:
            request = host_selection.BuildRequest(
                host=None, availability_zone=server.availability_zone,
                **instance_build.need_of(server.flavor)._asdict())
            choices = [usage for usage in host_selection.build_choices(
                context, self._conf, self._servicegroup, request)
                if usage.capacity.host not in tried]
        moved = host_tasks.build_failed(
            context, server, started, failure, choices,
            attempts=len(tried) if choices is None else None)
        if moved is None:
            LOG.warning('Building server %(uuid)s failed on %(host)s '
                        '(%(error)s); it is in error.',
                        {'uuid': server.uuid, 'host': server.host,
                         'error': failure.message})
            return
        LOG.warning('Building server %(uuid)s failed on %(host)s '
                    '(%(error)s); it is built on %(next)s instead.',
                    {'uuid': server.uuid, 'host': server.host,
                     'error': failure.message, 'next': moved.host})
        operations.tell_host(context, moved, rpc_compute.BUILD)

    def terminate(self, server):
        """Destroy a server the API is deleting, then record it deleted."""
        context = self._context
        started = host_tasks.start(context, server)
        task = operations.TASKS[operations.DELETING]
        notifications.instance_power(context, server, task.notification,
                                     'start')
        self._driver.destroy(server.host, server.uuid)
        after = host_tasks.end(context, server, started,
                               operations.deleted_values(
                                   server, timeutils.utcnow()))
        if after is not None:
            notifications.instance_power(context, after, task.notification,
                                         'end')

    def rebuild(self, server):
        """Rebuild a server evacuated to this host, as its migration says.

        The migration goes pre-migrating, then done (failed, and the
        server in error, when the driver fails); the server ends in the
        migration's target vm_state. A rebuild interrupted by the agent's
        death is resumed at its restart. One a retry superseded before it
        started is not built; one superseded meanwhile (a retried
        evacuation moved the server on) leaves no copy here.
        """
        context = self._context
        started = host_tasks.start(context, server)
        if started.superseded:
            LOG.info('Server %(uuid)s is not rebuilt here: its evacuation '
                     'to this host was retried elsewhere before it started.',
                     {'uuid': server.uuid})
            return
        target = (started.migration.target_vm_state
                  if started.migration is not None else operations.ACTIVE)
        try:
            power_state = self._driver.rebuild(
                server, stopped=target == operations.STOPPED)
        except driver_base.DriverError as exc:
            LOG.warning('Rebuilding evacuated server %(uuid)s failed: '
                        '%(error)s', {'uuid': server.uuid, 'error': exc})
            host_tasks.end(context, server, started,
                           {'vm_state': operations.ERROR},
                           failure=host_tasks.Failure.of(exc))
            return
        after = host_tasks.end(context, server, started, {
            'vm_state': target, 'power_state': power_state})
        if after is None:
            self._superseded(server)
        else:
            notifications.instance_task_ended(context, server, after)
        self._on_rebuilt()

    def _superseded(self, server):
        """Remove the copy just built of a server that moved on meanwhile.

        Kept when the server is still this host's (an operator reset its
        state while it was rebuilt): the copy is then its only one.
        """
        host = operations.hosts_of(self._context, [server.uuid]).get(
            server.uuid)
        if host == server.host:
            LOG.info('Server %(uuid)s was rebuilt, but its task was '
                     'cleared meanwhile; its state is left as it is now.',
                     {'uuid': server.uuid})
            return
        self._driver.destroy(server.host, server.uuid)
        LOG.warning('Server %(uuid)s was evacuated again to %(host)s while '
                    'it was rebuilt on %(here)s; the copy built here is '
                    'removed.', {'uuid': server.uuid, 'host': host,
                                 'here': server.host})
