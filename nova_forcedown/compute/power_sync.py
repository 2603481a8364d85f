"""The agent's power-state sync: the database told what its hosts run.

Once at start and every ``[DEFAULT] sync_power_state_interval`` seconds,
as Nova's compute does, the agent reads the live servers of its hosts
that have power (one query), asks the driver what each host runs, and
aligns each server whose record disagrees and has no task under way
(:mod:`nova_forcedown.objects.power_sync`). A sync that changed nothing
says nothing; one that did says what, in a line per kind of change.
"""

from oslo_log import log as logging

from nova_forcedown import condition_log
from nova_forcedown import exception
from nova_forcedown import periodic
from nova_forcedown.objects import instance as instance_obj
from nova_forcedown.objects import power_sync

LOG = logging.getLogger(__name__)


class PowerSync:
    """Sync the power states of ``hosts``' servers with ``driver``'s.

    ``has_power(host)``: whether the host is on (one switched off runs
    nothing because it is off, not because its servers left it).
    """

    def __init__(self, context, driver, hosts, has_power, interval):
        self._context = context
        self._driver = driver
        self._hosts = list(hosts)
        self._has_power = has_power
        self._ticker = periodic.Every(self._sync_and_say, interval,
                                      'power-sync')

    def start(self):
        self._ticker.start()
        return self

    def stop(self, timeout=None):
        self._ticker.stop(timeout)

    def _sync_and_say(self):
        try:
            aligned = self.sync()
        except exception.DatabaseUnavailable:
            # The heartbeats say so; the next sync tries again.
            return
        except Exception:
            LOG.exception('Syncing the power states of the servers failed.')
            return
        _say(aligned)

    def sync(self):
        """The servers aligned now, as (server before, after) pairs."""
        hosts = [host for host in self._hosts if self._has_power(host)]
        if not hosts:
            return []
        servers = instance_obj.get_by_hosts(self._context, hosts)
        runs = {host: self._driver.guests(host) for host in hosts}
        aligned = []
        for server in servers:
            found = runs[server.host].get(server.uuid, power_sync.NOSTATE)
            if not power_sync.out_of_step(server, found):
                continue
            after = power_sync.align(self._context, server, found)
            if after is not None:
                aligned.append((server, after))
        return aligned


def _say(aligned):
    stopping = [after.uuid for _, after in aligned if after.task_state]
    missing = [after.uuid for _, after in aligned
               if not after.task_state and
               after.power_state == power_sync.NOSTATE]
    updated = [after.uuid for _, after in aligned
               if after.uuid not in stopping and after.uuid not in missing]
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
