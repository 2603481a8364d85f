"""The monitor's loop: look, judge, fence, force down, evacuate.

Every ``[monitor] interval`` the leading monitor reads the compute
services and their liveness; each watched host that is down is judged on
a second channel (:mod:`.confirmation`), fenced when failed
(:mod:`.fencing`), then forced down with its servers marked shut down, and
its servers evacuated, a bounded number at a time (:mod:`.recovery`).

It fences nothing while it cannot see: the database away, the
coordination backend unreadable, or more of a zone down at once than the
fence-storm limit allows. What it decides of a host is logged when it
changes, not at every look.
"""

import time

from oslo_log import log as logging
from stevedore import exception as stevedore_exc

from nova_forcedown import condition_log
from nova_forcedown.conf import monitor as monitor_conf
from nova_forcedown import context as nf_context
from nova_forcedown import exception
from nova_forcedown.monitor import confirmation
from nova_forcedown.monitor import detection
from nova_forcedown.monitor.drivers import base as drivers
from nova_forcedown.monitor import fencing
from nova_forcedown.monitor import recovery
from nova_forcedown.objects import host_zones
from nova_forcedown.objects import service as service_obj
from nova_forcedown import periodic

LOG = logging.getLogger(__name__)

# Seconds before a suspect found not failed is judged again: each
# judgement asks its BMC, which may take seconds to time out.
REJUDGE_AFTER = 5.0

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

    def __init__(self, conf, servicegroup, leadership, clock=time.monotonic):
        # A look starts every interval, however long the last one took:
        # the time to see a failure is the liveness window plus at most
        # one interval.
        super().__init__(conf.monitor.interval, 'monitor', on_time=True)
        self._conf = conf
        self._servicegroup = servicegroup
        self._leadership = leadership
        self._clock = clock
        self._context = recovery.monitor_context()
        self._blind, self._failing = (
            condition_log.ConditionLog(LOG, messages,
                                       conf.log_reminder_interval, clock)
            for messages in (BLIND, FAILING))
        self._leading = None
        # host -> (what was last said of it, when it was judged).
        self._said = {}
        # zone -> its ConditionLog, while the fence-storm limit holds it.
        self._held = {}
        # host -> why it could not be switched back on, last said.
        self._restore_failed = {}
        # Servers found with nowhere to go, said once.
        self._no_room = set()
        # The hosts the last look watched, for the fence check; None
        # until this monitor has looked as the leader.
        self.watched_hosts = None

    @property
    def limit(self):
        """The largest share of a zone the monitor fences at once."""
        return (self._conf.fencing.max_forced_down_fraction or
                monitor_conf.DEFAULT_MAX_FAILED_FRACTION)

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
        # A request id per look, which the history shows for its steps and
        # the log for its lines.
        self._context = recovery.monitor_context()
        nf_context.make_current(self._context)
        try:
            self.look()
        except exception.DatabaseUnavailable as exc:
            self._blind.update(['database'], why='the database is '
                               'unavailable (%s)' % exception.first_line(exc))
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
        services = self._compute_services()
        self.watched_hosts = frozenset(
            service.host for service in detection.watched(services))
        why = self._servicegroup.blind_spot()
        if why is not None:
            self._blind.update(['backend'], why=why)
            return
        self._blind.update([])
        suspected = detection.suspects(services,
                                       self._servicegroup.liveness())
        self._forget(set(suspected))
        zones = host_zones.HostZones.load(self._context, self._conf)
        refused = detection.refused_zones(services, suspected, zones.of,
                                          self.limit)
        held = {host for refusal in refused for host in refusal.suspects}
        self._hold(refused)
        judged = [host for host in suspected
                  if host not in held and self._due(host)]
        for host in judged:
            self.handle(host)
        # A judged host may now be forced down: read them again.
        self.evacuate(self._compute_services() if judged else services)

    def _compute_services(self):
        return service_obj.ServiceList.get_records(
            self._context, binary=service_obj.COMPUTE_BINARY,
            include_api=False)

    def handle(self, host):
        """Judge a suspect; fence, force down and start its recovery."""
        settings = monitor_conf.host_settings(self._conf, host)
        try:
            driver = drivers.load(settings, self._conf.monitor.fence_timeout)
        except stevedore_exc.NoMatches:
            self._tell(host, 'its fence_driver %r does not exist; not '
                             'fenced' % settings.fence_driver)
            return
        asked_at = self._clock()
        status = self._status(driver)
        verdict = confirmation.judge(self._conf.monitor.confirm_with, status,
                                     self._probe(settings))
        if not verdict.failed:
            self._tell(host, verdict.why)
            return
        LOG.warning('Host %s has failed: %s (judged in %.2f s). Fencing it.',
                    host, verdict.why, self._clock() - asked_at)
        try:
            already_off = fencing.fence(driver,
                                        self._conf.monitor.fence_timeout,
                                        self._conf.monitor.fence_retries,
                                        power=status.power)
        except fencing.FenceFailed as exc:
            self._tell(host, 'its fence failed (%s): not forced down, its '
                             'servers not evacuated' % exc, logging.ERROR)
            return
        recovery.record_fence(self._context, host, already_off)
        try:
            recovery.force_down(self._context, self._conf, host)
        except exception.ForcedDownLimitExceeded as exc:
            self._tell(host, 'it is fenced but not forced down: %s' % exc,
                       logging.ERROR)
            return
        self._said.pop(host, None)
        LOG.warning('Host %s is fenced (%s) and forced down, its servers '
                    'marked shut down; %s.', host,
                    'found powered off' if already_off else 'powered off',
                    self._to_evacuate(host))

    def _to_evacuate(self, host):
        """How many servers of ``host`` are to be evacuated, said."""
        count = len(recovery.left_on(self._context, self._conf, host))
        if self._conf.monitor.evacuate == monitor_conf.EVACUATE_TAGGED:
            return ('%d server(s) to evacuate (tagged ones only: [monitor] '
                    'evacuate = tagged)' % count)
        return '%d server(s) to evacuate' % count

    def evacuate(self, services):
        """Go on with the hosts it recovers: evacuate, then restore.

        Evacuations start within the bound; a host with nothing left to
        evacuate nor being rebuilt is restored when [monitor] restore
        says so.
        """
        hosts = recovery.recovering(self._context, services)
        if not hosts:
            return
        budget = (self._conf.monitor.max_in_flight -
                  recovery.under_way(self._context, hosts))
        for host in hosts:
            left = recovery.left_on(self._context, self._conf, host)
            for server in left[:max(budget, 0)]:
                budget -= self._evacuated(host, server)
            if (not left and self._conf.monitor.restore and
                    not recovery.under_way(self._context, [host])):
                self.restore(next(service for service in services
                                  if service.host == host))

    def _evacuated(self, host, server):
        """1 once ``server``'s evacuation is accepted, else 0."""
        try:
            migration = recovery.evacuate(self._context, self._conf,
                                          self._servicegroup, server)
        except recovery.REFUSALS as exc:
            LOG.warning('Server %s of host %s is not evacuated: %s',
                        server.uuid, host, exc)
            return 0
        if migration is None:
            if server.uuid not in self._no_room:
                LOG.warning('Server %s of host %s waits: no destination of '
                            '[monitor] recovery_method %s has room for it.',
                            server.uuid, host,
                            self._conf.monitor.recovery_method)
            self._no_room.add(server.uuid)
            return 0
        self._no_room.discard(server.uuid)
        return 1

    def restore(self, service):
        """Switch a recovered host on; force it up once its agent is back.

        The force-up guard refuses while evacuations away from it are not
        yet cleaned up by its agent: the next look tries again.
        """
        host = service.host
        settings = monitor_conf.host_settings(self._conf, host)
        if not self._servicegroup.heartbeating([service]):
            self._switch_on(host, settings)
            return
        try:
            recovery.force_up(self._context, self._conf, host)
        except exception.Conflict:
            return
        LOG.warning('Host %s is back: its agent heartbeats and cleaned up '
                    'after the evacuations; its force-down is cleared.',
                    host)

    def _switch_on(self, host, settings):
        try:
            driver = drivers.load(settings, self._conf.monitor.fence_timeout)
            if driver.power_state() == drivers.ON:
                return
            driver.power_on()
        except (drivers.FenceError, stevedore_exc.NoMatches) as exc:
            why = str(exc)
            if self._restore_failed.get(host) != why:
                LOG.error('Host %s cannot be switched back on: %s.', host,
                          why)
            self._restore_failed[host] = why
            return
        self._restore_failed.pop(host, None)
        recovery.record_unfence(self._context, host)
        LOG.warning('Host %s has no server left to evacuate: switched back '
                    'on ([monitor] restore).', host)

    def _status(self, driver):
        try:
            return driver.status()
        except drivers.FenceError as exc:
            return str(exc)

    def _probe(self, settings):
        if (monitor_conf.PROBE not in self._conf.monitor.confirm_with or
                not settings.management_address):
            return None
        return confirmation.probe(settings.management_address,
                                  self._conf.monitor.probe_port,
                                  self._conf.monitor.probe_timeout)

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
        said = self._said.get(host)
        return said is None or self._clock() - said[1] >= REJUDGE_AFTER

    def _tell(self, host, why, level=logging.WARNING):
        """Say ``why`` of ``host`` unless it was the last thing said."""
        said = self._said.get(host)
        if said is None or said[0] != why:
            LOG.log(level, 'Host %s is down: %s.', host, why)
        self._said[host] = (why, self._clock())

    def _forget(self, suspected):
        for host in set(self._said) - suspected:
            LOG.info('Host %s is no longer a suspect: it is up again, or '
                     'was forced down or disabled.', host)
            del self._said[host]
