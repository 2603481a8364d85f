"""The agent's power-state sync: the database told what its hosts run.

At the agent's first database heartbeat and every ``[DEFAULT]
sync_power_state_interval`` seconds after, as Nova's compute does, the
live servers of its hosts that have power are read in the heartbeat's
transaction (an idle agent still costs the database one transaction per
heartbeat) and compared with what the driver says each host runs. The
servers whose record disagrees, with no task under way, are then aligned
one by one in the sync's own thread
(:mod:`nova_forcedown.objects.power_sync`). A sync that changed nothing
says nothing; one that did says what, in a line per kind of change.
"""

import concurrent.futures
import time

from oslo_log import log as logging

from nova_forcedown import condition_log
from nova_forcedown import exception
from nova_forcedown.objects import instance as instance_obj
from nova_forcedown.objects import instance_operations as operations
from nova_forcedown.objects import power_sync

LOG = logging.getLogger(__name__)


class PowerSync:
    """Sync the power states of ``hosts``' servers with ``driver``'s.

    ``has_power(host)``: whether the host is on (one switched off runs
    nothing because it is off, not because its servers left it).
    """

    def __init__(self, context, driver, hosts, has_power, interval,
                 clock=time.monotonic):
        self._context = context
        self._driver = driver
        self._hosts = list(hosts)
        self._has_power = has_power
        self._interval = interval
        self._clock = clock
        self._due_at = clock()
        self._pool = concurrent.futures.ThreadPoolExecutor(
            1, thread_name_prefix='power-sync')

    def stop(self):
        self._pool.shutdown(wait=True, cancel_futures=True)

    def out_of_step_if_due(self, context):
        """[(server, what its host runs)] that disagree, when a sync is due.

        Read in ``context``'s transaction, the agent's database heartbeat,
        which gives them to :meth:`take` once it committed. None when no
        sync is due.
        """
        if self._clock() < self._due_at:
            return None
        hosts = [host for host in self._hosts if self._has_power(host)]
        if not hosts:
            return []
        runs = {host: self._driver.guests(host) for host in hosts}
        found = []
        for server in instance_obj.power_states_on(context, hosts):
            state = runs[server.host].get(server.uuid, operations.NOSTATE)
            if power_sync.out_of_step(server, state):
                found.append((server, state))
        return found

    def take(self, out_of_step):
        """Align what a due sync found; the next is an interval on."""
        self._due_at = self._clock() + self._interval
        if out_of_step:
            self._pool.submit(self._align_and_say, out_of_step)

    def _aligned(self, out_of_step):
        """The servers aligned, as (server before, after) pairs."""
        aligned = []
        for server, state in out_of_step:
            after = power_sync.align(self._context, server, state)
            if after is not None:
                aligned.append((server, after))
        return aligned

    def _align_and_say(self, out_of_step):
        try:
            aligned = self._aligned(out_of_step)
        except exception.DatabaseUnavailable:
            # The heartbeats say so; the next sync finds them again.
            return
        except Exception:
            LOG.exception('Syncing the power states of the servers failed.')
            return
        _say(aligned)


def _say(aligned):
    stopping, missing, updated = [], [], []
    for _, after in aligned:
        if after.task_state:
            stopping.append(after.uuid)
        elif after.power_state == operations.NOSTATE:
            missing.append(after.uuid)
        else:
            updated.append(after.uuid)
    if stopping:
        LOG.warning('%(count)d server(s) stopped by themselves, or run '
                    'while stopped: stopping them, as Nova\'s power-state '
                    'sync does: %(names)s.', _named(stopping))
    if missing:
        LOG.warning('%(count)d server(s) not run by their host: power state '
                    'now NOSTATE, vm_state left as it was (stop and start '
                    'them, or evacuate them once the host is down, to run '
                    'them again): %(names)s.', _named(missing))
    if updated:
        LOG.info('Power state of %(count)d server(s) now what their host '
                 'reports: %(names)s.', _named(updated))


def _named(uuids):
    return {'count': len(uuids), 'names': condition_log.describe(uuids)}
