"""The monitor's loop: look, judge, fence, force down, evacuate, restore.

Every ``[monitor] interval`` the leading monitor reads the compute
services from the compute API, and the hosts' pulses from the
coordination backend when ``[monitor] pulse`` is on. Each watched host
that is down on the target, or whose pulse is gone, is a suspect, judged
on a second channel and, when failed, fenced and forced down
(:mod:`.host_failure`). The servers of the hosts it fenced are evacuated
a bounded number at a time (:mod:`.in_flight`), the first batch right
after the force-down, each batch on a fresh verdict, and each evacuation
followed to its end.

Hosts are handled concurrently, each in a thread of the monitor's pool:
a BMC that hangs delays its own host only. The look itself makes no BMC
call.

It fences nothing while it cannot see: the compute API away, the
pulses unreadable, or more of a zone down at once than the fence-storm
limit allows. What it decides of a host is logged when it changes, not
at every look.
"""

from concurrent import futures
import threading
import time

from futurist import ThreadPoolExecutor
from futurist import waiters
from oslo_log import log as logging
from stevedore import exception as stevedore_exc

from nova_forcedown import condition_log
from nova_forcedown.conf import monitor as monitor_conf
from nova_forcedown import exception
from nova_forcedown.monitor import compute_api
from nova_forcedown.monitor import detection
from nova_forcedown.monitor.drivers import base as drivers
from nova_forcedown.monitor import host_failure
from nova_forcedown.monitor import in_flight
from nova_forcedown.monitor import recovery
from nova_forcedown.monitor import reserved
from nova_forcedown import periodic
from nova_forcedown.servicegroup import membership

LOG = logging.getLogger(__name__)

# Seconds before a suspect found not failed is judged again: each
# judgement asks its BMC, which may take seconds to time out.
REJUDGE_AFTER = 5.0

# Hosts handled at once; a BMC that hangs holds one for fence_timeout.
HOST_WORKERS = 32

# Seconds between two looks at a fenced host with nothing left to do.
SETTLED_RECHECK = 30.0

# Evacuations of a batch sent together, right after one renewal of the
# lease: Nova's API takes a few hundred milliseconds to accept each.
EVACUATIONS_AT_ONCE = 4

# Seconds between two evacuations of a server that waits for room: each
# try that finds none leaves an evacuation in error on the target.
ROOM_RETRY_INTERVAL = 10.0

FAILING = condition_log.Messages(
    level=logging.ERROR,
    started='Unexpected error in a look at the hosts (%(error)s); trying '
            'again every %(interval)s s.',
    reminder='Looks at the hosts still fail after %(seconds)d s: '
             '%(error)s.',
    ended='Recovered: looks at the hosts succeed again, after %(seconds)d '
          's.')

BLIND = condition_log.Messages(
    level=logging.WARNING,
    started='Fencing nothing: %(why)s.',
    reminder='Still fencing nothing after %(seconds)d s: %(why)s.',
    ended='Recovered: liveness can be read again, after %(seconds)d s.')

# One condition per zone held back by the fence-storm limit: one line for
# the zone, however many of its hosts are down, and not one per host each
# time the count of a partition grows.
ZONE_HELD = condition_log.Messages(
    level=logging.WARNING,
    started='Fencing none of zone %(names)s: %(down)d of its %(hosts)d '
            'compute hosts are down at once (%(forced_down)d already forced '
            'down), more than the %(limit)s the monitor may fence ([fencing] '
            'max_forced_down_fraction); the monitor may be cut off from '
            'them. Down: %(suspects)s.',
    reminder='Still fencing none of zone %(names)s after %(seconds)d s: '
             '%(down)d of its %(hosts)d compute hosts are down at once. '
             'Down: %(suspects)s.',
    ended='Zone %(names)s is within the fence-storm limit again, after '
          '%(seconds)d s: its hosts still down are judged one by one.')


class Monitor(periodic.Ticker):

    def __init__(self, conf, api, leadership, pulse=None,
                 clock=time.monotonic, load=drivers.load):
        """A monitor acting through ``api`` while ``leadership`` leads.

        ``api``: a :class:`compute_api.ComputeAPI`; ``pulse``: a
        :class:`membership.MembershipReader` of the hosts' pulses, or None.
        """
        # A look starts every interval, however long the last one took:
        # the time to see a failure is the liveness window plus at most
        # one interval.
        super().__init__(conf.monitor.interval, 'monitor', on_time=True)
        self._conf = conf
        self._api = api
        self._leadership = leadership
        self._pulse = pulse
        self._clock = clock
        self._load = load
        self._blind, self._failing = (
            condition_log.ConditionLog(LOG, messages,
                                       conf.log_reminder_interval, clock)
            for messages in (BLIND, FAILING))
        self._leading = None
        self._pool = ThreadPoolExecutor(max_workers=HOST_WORKERS)
        self._in_flight = in_flight.InFlight(conf.monitor.max_in_flight)
        # host -> its job in the pool, while one runs.
        self._busy = {}
        # What was said of each suspect, from the look and the pool.
        self._said_lock = threading.Lock()
        # host -> (what was last said of it, when it was judged).
        self._said = {}
        # host -> what was last said of its recovery, if anything.
        self._said_recovery = {}
        # zone -> its ConditionLog, while the fence-storm limit holds it.
        self._held = {}
        # migration id -> its status when last seen, while followed.
        self._followed = {}
        # Servers given up on or waiting, said once each.
        self._said_servers = set()
        # host -> when to look again at a fenced host with nothing to do.
        self._settled = {}
        # server id -> when an evacuation waiting for room was last tried.
        self._room_tried = {}
        # host -> its service's updated_at when seen switched off by a
        # restore: a newer one says its compute service is back.
        self._off_since = {}
        # The pulses of the last look (None: not read).
        self._members = None
        # The hosts the last look watched, for the fence check; None
        # until this monitor has looked as the leader.
        self.watched_hosts = None

    @property
    def limit(self):
        """The largest share of a zone the monitor fences at once."""
        return (self._conf.fencing.max_forced_down_fraction or
                monitor_conf.DEFAULT_MAX_FAILED_FRACTION)

    def stop(self, timeout=None):
        """Stop looking; wait ``timeout`` for the jobs under way.

        A fence or a write under way is let finish, within the bound.
        """
        deadline = None if timeout is None else time.monotonic() + timeout
        super().stop(timeout)
        jobs = [job for job in list(self._busy.values()) if job is not None]
        waiters.wait_for_all(jobs, None if deadline is None else
                             max(0.0, deadline - time.monotonic()))
        self._pool.shutdown(wait=False)

    def tick(self):
        leading = self._leadership.leads()
        if leading != self._leading:
            LOG.info('Leading: this monitor acts.' if leading else
                     'Standing by: another monitor holds the leader lock, or '
                     'it cannot be reached.')
            self._leading = leading
        if not leading:
            self.watched_hosts = None
            return
        failure = None
        try:
            self.look()
        except compute_api.Unreachable as exc:
            self._blind.update(['api'], why='the compute API does not answer '
                               '(%s)' % exc)
        except Exception as exc:  # noqa: said once, tried again next look
            failure = exc
        # Logged out of the except block, as the heartbeats log theirs.
        if failure is not None:
            self._failing.update(['failing'], exc_info=failure,
                                 error=exception.first_line(failure),
                                 interval=self._conf.monitor.interval)
        else:
            self._failing.update([])

    def look(self):
        services = self._api.compute_services()
        self.watched_hosts = frozenset(
            service.host for service in detection.watched(services))
        if self._pulse is not None:
            self._members = self._pulse.members()
            if self._members is None:
                self._blind.update(['pulse'], why='the hosts\' pulses '
                                   'cannot be read from the coordination '
                                   'backend')
                return
        self._blind.update([])
        suspected = detection.suspects(
            services, lambda service: not self.is_suspect(service))
        self._forget(set(suspected))
        zones = {service.host: service.zone for service in services}
        refused = detection.refused_zones(services, suspected, zones.get,
                                          self.limit)
        held = {host for refusal in refused for host in refusal.suspects}
        self._hold(refused)
        by_host = {service.host: service for service in services}
        for host in suspected:
            if host not in held and self._due(host):
                self._start(host, self._handle, by_host[host])
        self.recover(services)

    def is_suspect(self, service):
        """Whether ``service``'s host may have failed, as the look sees it.

        Down on the target; or, with the pulses read, its pulse gone: the
        target may call a host down only after its service_down_time.
        """
        if not service.up:
            return True
        return (self._members is not None and
                membership.host_member_id(service.host)
                not in self._members)

    def _handle(self, service):
        handler = host_failure.HostFailure(
            self._conf, self._api, self._leadership, self._still_suspect,
            self._tell, load=self._load, clock=self._clock)
        if not handler.handle(service):
            return
        with self._said_lock:
            self._said.pop(service.host, None)
        if handler.servers is not None:
            self._first_batch(service, handler.servers)

    def _first_batch(self, service, servers):
        """Evacuate a host just forced down at once, in the same job.

        The next look would add its wait and its reads to every server's
        downtime; its verdict is checked again before the batch all the
        same (:meth:`_evacuate`). Its evacuations are read first: one an
        operator started is not started again.
        """
        migrations = self._api.evacuations_from(service.host)
        left = recovery.to_evacuate(self._conf, servers, migrations)
        batch = left[:self._in_flight.claim(len(left))]
        if batch:
            self._evacuate(service, batch, migrations)

    def _still_suspect(self, service):
        """:meth:`is_suspect` on the pulses read now, not at the look."""
        if self._pulse is not None:
            members = self._pulse.members()
            if members is None:
                return False
            self._members = members
        return self.is_suspect(service)

    # ------------------------------------------------------------ recovery

    def recover(self, services):
        """Go on with the hosts it fenced: evacuate, follow, restore.

        Evacuations start within ``[monitor] max_in_flight`` over every
        host; each host's batch runs in its own job, on a fresh verdict.
        A host with nothing left to do is looked at every SETTLED_RECHECK
        seconds only, so hosts fenced long ago cost the API little.

        A host whose job runs is read (its evacuations count) but left to
        its job; so is one whose job ended during the reads, which may
        predate its evacuations.
        """
        busy = self._busy_hosts()
        hosts = [service for service in recovery.recovering(services)
                 if self._clock() >= self._settled.get(service.host, 0)]
        for gone in set(self._settled) - {
                service.host for service in recovery.recovering(services)}:
            del self._settled[gone]
        mark = self._in_flight.read_begins()
        migrations = {service.host: self._api.evacuations_from(service.host)
                      for service in hosts}
        self._in_flight.read(sum(recovery.under_way(found)
                                 for found in migrations.values()), mark)
        self._follow(migrations, {service.host for service in services
                                  if not service.up or service.forced_down})
        for service in hosts:
            if service.host in busy:
                continue
            try:
                self._recover_host(service, migrations[service.host])
            except compute_api.Refused as exc:
                self._tell_recovery(service.host, 'its servers cannot be '
                                    'read: %s' % exc, logging.ERROR)

    def _recover_host(self, service, migrations):
        """Start what ``service``'s host needs, in a job of its own."""
        servers = self._api.servers_on(service.host)
        self._say_given_up(service.host, servers, migrations)
        left = recovery.to_evacuate(self._conf, servers, migrations)
        due = [server for server in left
               if self._room_retry_due(service.host, server)]
        batch = due[:self._in_flight.claim(len(due))] if due else []
        if batch:
            if not self._start(service.host, self._evacuate, service, batch,
                               migrations):
                self._in_flight.released(len(batch))
        elif not left and not recovery.under_way(migrations):
            if self._conf.monitor.restore:
                self._start(service.host, self._restore, service)
            else:
                self._settled[service.host] = (self._clock() +
                                               SETTLED_RECHECK)

    def _room_retry_due(self, host, server):
        """Whether ``server`` may be evacuated now; said once if waiting.

        One that waits for room is tried every ROOM_RETRY_INTERVAL.
        """
        if not recovery.waits_for_room(server):
            self._room_tried.pop(server.id, None)
            return True
        self._say_server(server.id, 'Server %s of host %s waits: no host '
                         'has room for it (%s); tried again every %d s.',
                         server.id, host, server.fault,
                         ROOM_RETRY_INTERVAL)
        tried = self._room_tried.get(server.id)
        if tried is not None and (self._clock() - tried <
                                  ROOM_RETRY_INTERVAL):
            return False
        self._room_tried[server.id] = self._clock()
        return True

    def _evacuate(self, service, batch, migrations):
        """Evacuate ``batch``, if the host is still fenced and this leads.

        The batch on a fresh verdict (:meth:`_why_not_evacuate`), and each
        evacuation right after the lease is renewed.
        """
        unstarted = len(batch)
        reserved_hosts = reserved.ReservedHosts(self._conf, self._api,
                                                service.host)
        try:
            for group in self._verified(service, batch):
                unstarted -= self._evacuate_group(service.host, group,
                                                  migrations, reserved_hosts)
        finally:
            self._in_flight.released(unstarted)

    def _verified(self, service, batch):
        """``batch`` in groups, each after this monitor proved it leads.

        None at all unless the host is still fenced (its BMC and service
        read first).
        """
        host = service.host
        why = self._why_not_evacuate(service)
        if why is not None:
            self._tell_recovery(host, why)
            return
        self._tell_recovery(host, None)
        for start in range(0, len(batch), EVACUATIONS_AT_ONCE):
            if not self._leadership.still_leads():
                self._tell_recovery(host, 'its servers are not evacuated: '
                                    'this monitor no longer leads')
                return
            yield batch[start:start + EVACUATIONS_AT_ONCE]

    def _evacuate_group(self, host, group, migrations, reserved_hosts):
        """Evacuate ``group`` at once; how many the target accepted.

        Destinations are chosen (and reserved hosts prepared) first, one
        server after the other; the evacuations are then sent together.
        """
        sends = []
        for server in group:
            destination = self._destination(server, migrations,
                                            reserved_hosts)
            if destination is False:
                self._say_server(server.id, 'Server %s of host %s waits: no '
                                 'reserved host of [monitor] reserved_hosts '
                                 'is up and not forced down.', server.id,
                                 host)
            elif self._prepared(host, server, destination, reserved_hosts):
                sends.append((server, destination))
        if not sends:
            return 0
        with futures.ThreadPoolExecutor(len(sends)) as senders:
            accepted = sum(senders.map(
                lambda send: self._send_evacuation(host, *send), sends))
        return accepted

    def _prepared(self, host, server, destination, reserved_hosts):
        """Whether ``destination`` is ready for ``server``; said if not."""
        if destination is None:
            return True
        try:
            reserved_hosts.prepare(destination)
        except compute_api.Refused as exc:
            self._say_server(server.id, 'Server %s of host %s is not '
                             'evacuated: %s', server.id, host, exc)
            return False
        return True

    def _send_evacuation(self, host, server, destination):
        """Evacuate ``server``; whether the target accepted it."""
        try:
            self._api.evacuate(server.id, host=destination)
        except compute_api.Refused as exc:
            self._say_server(server.id, 'Server %s of host %s is not '
                             'evacuated: %s', server.id, host, exc)
            return False
        self._in_flight.started()
        LOG.info('Evacuating server %s of host %s (to %s).', server.id, host,
                 destination or 'the host the scheduler chooses')
        return True

    def _why_not_evacuate(self, service):
        """Why the host's servers may not be evacuated now, or None.

        Its BMC must say now that it is off, and the host be still the
        monitor's to recover; read in that order, the slower first.
        """
        try:
            power = self._driver(service.host).power_state()
        except (drivers.FenceError, stevedore_exc.NoMatches) as exc:
            return ('its servers are not evacuated: its BMC cannot be read '
                    '(%s)' % exc)
        if power != drivers.OFF:
            return ('its servers are not evacuated: its BMC says it is '
                    'powered on again')
        current, _ = self._api.service(service)
        if current is None or not recovery.recovering([current]):
            return 'its servers are not evacuated: it was taken back meanwhile'
        return None

    def _destination(self, server, migrations, reserved):
        """Where to evacuate ``server``: None for the scheduler's choice.

        Each try after a failed one takes the next destination of
        [monitor] recovery_method; a reserved host down or forced down is
        passed over. False when no destination can be tried.
        """
        tries = recovery.destinations(self._conf)
        first = recovery.failures(migrations, server.id)
        for step in range(len(tries)):
            destination = tries[(first + step) % len(tries)]
            if destination is None or reserved.usable(destination):
                return destination
        return False

    def _follow(self, migrations, down):
        """Say how each evacuation under way ended, once.

        One whose destination is ``down`` is said once as stuck.
        """
        seen = set()
        for host, found in migrations.items():
            for migration in found:
                seen.add(migration.id)
                before = self._followed.get(migration.id)
                if migration.status not in compute_api.MIGRATION_ENDED:
                    self._followed[migration.id] = migration.status
                    if migration.dest_compute in down:
                        self._say_stuck(host, migration)
                elif before is not None:
                    del self._followed[migration.id]
                    level = (logging.ERROR if migration.status in
                             compute_api.MIGRATION_FAILED else logging.INFO)
                    LOG.log(level, 'Evacuation of server %s from host %s to '
                            '%s ended %s.', migration.instance_uuid, host,
                            migration.dest_compute, migration.status)
        for gone in set(self._followed) - seen:
            del self._followed[gone]

    def _say_stuck(self, host, migration):
        """An evacuation whose destination went down before it ended.

        Left to an operator: the target keeps the rebuild for the
        destination's compute service, which may still run it when it
        comes back, so evacuating the server again could run it twice.
        """
        self._say_server(
            migration.instance_uuid, 'Evacuation of server %s from host %s '
            'to %s is stuck (%s): %s is down. Not tried again, as %s may '
            'still rebuild it when its compute service comes back; once %s '
            'is fenced, an operator may reset the server\'s state and '
            'evacuate it again.', migration.instance_uuid, host,
            migration.dest_compute, migration.status,
            migration.dest_compute, migration.dest_compute,
            migration.dest_compute, level=logging.ERROR)

    def _say_given_up(self, host, servers, migrations):
        for server in recovery.given_up(self._conf, servers, migrations):
            self._say_server(
                server.id, 'Server %s of host %s is left in error for an '
                'operator: %d evacuations of it failed ([monitor] '
                'evacuation_retries = %d).', server.id, host,
                recovery.failures(migrations, server.id),
                self._conf.monitor.evacuation_retries, level=logging.ERROR)

    def _say_server(self, server_id, message, *args, level=logging.WARNING):
        if server_id not in self._said_servers:
            LOG.log(level, message, *args)
        self._said_servers.add(server_id)

    def _restore(self, service):
        """Switch a recovered host on; force it up once its service is back.

        Never switched on while its BMC reports a critical fault. The
        target's own force-up guard (Nova's, or this project's) refuses
        while evacuations away from it are not yet cleaned up by its
        compute service: the next look tries again.
        """
        host = service.host
        try:
            driver = self._driver(host)
            status = driver.status()
        except (drivers.FenceError, stevedore_exc.NoMatches) as exc:
            self._tell_recovery(host, 'it cannot be switched back on: %s'
                                % exc, logging.ERROR)
            return
        if status.power == drivers.OFF:
            self._switch_on(service, driver, status)
        elif self._back(service):
            self._force_up(service)

    def _switch_on(self, service, driver, status):
        host = service.host
        if status.health == drivers.CRITICAL:
            self._tell_recovery(host, 'it is not switched back on: its BMC '
                                'reports a critical fault (%s)' %
                                ', '.join(status.faults))
            return
        if not self._leadership.still_leads():
            return
        self._off_since[host] = service.updated_at
        try:
            driver.power_on()
        except drivers.FenceError as exc:
            self._tell_recovery(host, 'it cannot be switched back on: %s'
                                % exc, logging.ERROR)
            return
        self._tell_recovery(host, None)
        LOG.warning('Host %s has no server left to evacuate: switched back '
                    'on ([monitor] restore).', host)

    def _back(self, service):
        """Whether the host's compute service runs again since switched on.

        Its service's updated_at moved since the monitor saw the host off
        (or, for a host found on, since it first saw it so: a new leader
        waits for the next heartbeat); with the pulses read, its pulse is
        back too.
        """
        seen = self._off_since.setdefault(service.host, service.updated_at)
        if service.updated_at == seen:
            return False
        if self._pulse is not None:
            members = self._pulse.members() or ()
            return membership.host_member_id(service.host) in members
        return True

    def _force_up(self, service):
        if not self._leadership.still_leads():
            return
        current, entity_tag = self._api.service(service)
        if current is None or not recovery.recovering([current]):
            return
        try:
            self._api.update_service(current.id, {
                'forced_down': False, 'status': 'enabled'},
                entity_tag=entity_tag)
        except compute_api.Refused:
            return
        self._off_since.pop(service.host, None)
        LOG.warning('Host %s is back: its compute service runs and cleaned '
                    'up after the evacuations; its force-down is cleared '
                    'and it is enabled.', service.host)

    def _driver(self, host):
        settings = monitor_conf.host_settings(self._conf, host)
        return self._load(settings, self._conf.monitor.fence_timeout)

    # ----------------------------------------------------------- the pool

    def _busy_hosts(self):
        """The hosts whose job runs now."""
        return {host for host, job in list(self._busy.items())
                if job is not None and not job.done()}

    def _start(self, host, job, *args):
        """Run ``job(*args)`` for ``host`` in the pool; whether it started.

        One job at a time per host.
        """
        running = self._busy.get(host)
        if running is not None and not running.done():
            return False
        self._busy[host] = self._pool.submit(self._run, host, job, *args)
        return True

    def _run(self, host, job, *args):
        try:
            job(*args)
        except compute_api.Unreachable as exc:
            self._tell(host, 'the compute API does not answer (%s)' % exc,
                       logging.ERROR)
        except Exception:  # noqa: one host's failure is not the loop's
            LOG.exception('Unexpected error while handling host %s.', host)
        finally:
            self._busy.pop(host, None)

    # ---------------------------------------------------------- what is said

    def _hold(self, refused):
        """Say which zones the fence-storm limit holds, when that changes."""
        for refusal in refused:
            if refusal.zone not in self._held:
                self._held[refusal.zone] = condition_log.ConditionLog(
                    LOG, ZONE_HELD, self._conf.log_reminder_interval,
                    self._clock)
            self._held[refusal.zone].update(
                [refusal.zone], hosts=refusal.hosts,
                down=len(refusal.suspects) + refusal.forced_down,
                forced_down=refusal.forced_down, limit=refusal.limit,
                suspects=condition_log.describe(refusal.suspects))
        for zone in set(self._held) - {refusal.zone for refusal in refused}:
            self._held.pop(zone).update([])

    def _due(self, host):
        with self._said_lock:
            said = self._said.get(host)
        return said is None or self._clock() - said[1] >= REJUDGE_AFTER

    def _tell(self, host, why, level=logging.WARNING):
        """Say ``why`` of ``host`` unless it was the last thing said."""
        with self._said_lock:
            said = self._said.get(host)
            if said is None or said[0] != why:
                LOG.log(level, 'Host %s is down: %s.', host, why)
            self._said[host] = (why, self._clock())

    def _tell_recovery(self, host, why, level=logging.WARNING):
        """Say ``why`` of a host being recovered, once; None: all is well."""
        with self._said_lock:
            if why is not None and self._said_recovery.get(host) != why:
                LOG.log(level, 'Host %s is fenced: %s.', host, why)
            self._said_recovery[host] = why

    def _forget(self, suspected):
        busy = self._busy_hosts()
        with self._said_lock:
            for host in set(self._said) - suspected:
                if host in busy:
                    continue
                LOG.info('Host %s is no longer a suspect: it is up again, or '
                         'was forced down or disabled.', host)
                del self._said[host]
