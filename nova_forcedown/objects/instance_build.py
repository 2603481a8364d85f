"""Create servers as Nova builds them: placed, claimed and recorded at once.

``POST /servers`` makes the servers of one request in one transaction.
Each goes to the first of the scheduler's choices
(:func:`nova_forcedown.scheduler.host_selection.build_choices`, ranked
most free memory first as each claim leaves it) whose host still takes
servers (enabled and not forced down, read share-locked: a force-down
committed after the scheduler read is seen, or waits for this one) and
whose node still has room (:func:`.compute_node.claim`, its row locked:
concurrent creates never overcommit it). The server is recorded there in
vm_state ``building``, task ``spawning``, with its ``create`` action. When
one server of the request finds no room none is placed: all are in error
with Nova's "No valid host" fault, as Nova's scheduler fails a request
whole. Once committed, each host's agent is told to build its server
(:mod:`nova_forcedown.compute.tasks`).
"""

import collections
import random

from oslo_utils import timeutils

from nova_forcedown.db import engine as db_engine
from nova_forcedown.db import instance_actions as db_instance_actions
from nova_forcedown.db import instances as db_instances
from nova_forcedown.db import services as db_services
from nova_forcedown.objects import compute_node as compute_node_obj
from nova_forcedown.objects import instance as instance_obj
from nova_forcedown.objects import instance_action
from nova_forcedown.objects import instance_fault
from nova_forcedown.objects import instance_operations as operations
from nova_forcedown.rpc import compute as rpc_compute

ACTION = 'create'
# The event each host's attempt at building a server records.
BUILD_EVENT = 'compute__do_build_and_run_instance'

# A server's fault once its build failed everywhere it may go, as Nova's.
ATTEMPTS_EXCEEDED = ('Exceeded maximum number of retries. Exceeded max '
                     'scheduling attempts %(attempts)d for instance '
                     '%(uuid)s. Last exception: %(error)s')
HOSTS_EXHAUSTED = ('Exceeded maximum number of retries. Exhausted all hosts '
                   'available for retrying build failures for instance '
                   '%(uuid)s.')

# What a server takes, as compute_node.fits() reads it.
Need = collections.namedtuple('Need', ('vcpus', 'memory_mb', 'root_gb',
                                       'ephemeral_gb'))


def need_of(flavor):
    """The :class:`Need` of a server of ``flavor`` (its copy)."""
    return Need(*(flavor[name] for name in instance_obj.RESOURCES))


def create(context, choices, servers):
    """Record ``servers``, placed on ``choices``; their records, in order.

    ``servers``: the values of each (uuid, names, flavor copy, owner,
    ...), all of one flavor; ``choices``: the scheduler's NodeUsages.
    """
    records = _created(context, choices, servers)
    for record in records:
        if record.task_state == operations.SPAWNING:
            operations.tell_host(context, record, rpc_compute.BUILD)
    return records


@db_engine.writer
def _created(context, choices, servers):
    now = timeutils.utcnow()
    need = need_of(servers[0]['flavor'])
    taken = collections.Counter()
    records = []
    for values in servers:
        found = _claimed(context, choices, need, taken)
        if found is None:
            return _refused(context, records, servers, now)
        taken[found.node_id] += 1
        records.append(_record(context, dict(
            values, host=found.host, node=found.node,
            vm_state=operations.BUILDING, task_state=operations.SPAWNING),
            now))
    return records


def _record(context, values, now):
    record = instance_obj.create(context, created_at=now, updated_at=now,
                                 power_state=operations.NOSTATE, progress=0,
                                 **values)
    db_instance_actions.record_action(context, values['uuid'], ACTION, now)
    return record


def _refused(context, placed, servers, now):
    """Every server of the request in error with Nova's fault; the records.

    Those already placed in this transaction leave their host, which
    releases their claim.
    """
    unplaced = {'host': None, 'node': None, 'vm_state': operations.ERROR,
                'task_state': None}
    records = [instance_obj.update(context, record, unplaced)
               for record in placed]
    records += [_record(context, dict(values, **unplaced), now)
                for values in servers[len(placed):]]
    for record in records:
        instance_fault.record(context, record.uuid,
                              instance_fault.NO_VALID_HOST)
    return records


def tried_hosts(context, server):
    """The hosts ``server``'s build was tried on, in order, its own last."""
    action = instance_action.latest(context, server.uuid, ACTION)
    events = (instance_action.events(context, action.id)
              if action is not None else [])
    hosts = [event.host for event in events if event.event == BUILD_EVENT]
    return [host for host in hosts if host != server.host] + [server.host]


def reschedule(context, server, choices):
    """Move ``server``, whose build failed on its host, to another.

    In the open transaction: the first of ``choices`` (NodeUsages) whose
    host still takes servers and whose node still has room is claimed,
    and the server moves there, still spawning, if it still is on its
    host. Its record there, or None when no choice takes it, or False
    when its task is gone (a delete was asked meanwhile).
    """
    found = _claimed(context, choices, need_of(server.flavor),
                     collections.Counter())
    if found is None:
        return None
    values = {'host': found.host, 'node': found.node}
    if not db_instances.instance_finish_task(
            context, server.uuid, server.host, operations.SPAWNING, values):
        return False
    return server._replace(**values)


def _claimed(context, choices, need, taken):
    """The Capacity of the first choice that still takes ``need``; or None.

    ``taken``: the servers of this request placed on each node so far,
    which rank it lower; the claim's read of the node's usage sees them,
    as they are recorded in this transaction.
    """
    for usage in _ranked(choices, need, taken):
        if _claim_one(context, usage.capacity, need):
            return usage.capacity
    return None


def _claim_one(context, capacity, need):
    """Whether ``need`` is claimed on ``capacity``'s node, its host usable.

    On PostgreSQL a refusal releases the locks it took (a savepoint rolled
    back): two creates that each try the other's full node next then never
    wait on each other. MariaDB keeps them, and reports the deadlock at
    once; the transaction is retried.
    """
    connection = context.connection
    savepoint = (connection.begin_nested()
                 if connection.dialect.name == 'postgresql' else None)
    claimed = (db_services.service_takes_servers(context, capacity.host) and
               compute_node_obj.claim(context, capacity, need))
    if savepoint is not None:
        if claimed:
            savepoint.commit()
        else:
            savepoint.rollback()
    return claimed


def _ranked(choices, need, taken):
    """Most free memory first, as this request's claims leave it.

    Nodes as free as each other come in an order of this request's own:
    concurrent creates on a cloud of equal nodes then spread over them
    instead of queueing on the first one's row lock.
    """
    def free_memory(usage):
        return (usage.capacity.memory_mb - usage.used[1] -
                taken[usage.capacity.node_id] * need.memory_mb)

    shuffled = random.sample(choices, len(choices))
    return sorted(shuffled, key=lambda usage: -free_memory(usage))
