"""One suspect host: judged, fenced, forced down, each on a fresh verdict.

Each suspect is handled in a thread of its own (the monitor's pool), so a
BMC that hangs costs only its own host; every BMC call is bounded by
``[monitor] fence_timeout`` in its driver.

A verdict ages: between a read and a write the monitor may stall (a
pause, a partition, a slow API) while an operator, or another monitor,
switches the host on and starts servers on it. So before each write the
monitor proves again what it acts on: that it still leads (the leader
lock renewed at that moment), that the host is still a suspect (its
service read again), and what its BMC says (read again right before the
fence and right before the force-down). The force-down carries the
service's entity tag where the target serves one (``If-Match``), so the
target itself refuses it if the service changed since it was read
(412); against Nova, which has none, the service is read again right
before the write, and the window left is that read, the lease's renewal
and the write's round trip.
"""

import time

from oslo_log import log as logging
from stevedore import exception as stevedore_exc

from nova_forcedown.conf import monitor as monitor_conf
from nova_forcedown.monitor import compute_api
from nova_forcedown.monitor import confirmation
from nova_forcedown.monitor.drivers import base as drivers
from nova_forcedown.monitor import fencing
from nova_forcedown.monitor import recovery

LOG = logging.getLogger(__name__)


class Stale(Exception):
    """What the monitor judged no longer holds: nothing was written."""


class HostFailure:
    """Judge ``service``'s host and, when it failed, fence and force it down.

    ``is_suspect(service)``: whether a service record read now still
    makes its host a suspect (down on the target, or its pulse gone).
    ``tell(host, why, level)``: says what was found, once.
    """

    def __init__(self, conf, api, leadership, is_suspect, tell,
                 load=drivers.load, clock=time.monotonic):
        self._conf = conf
        self._api = api
        self._leadership = leadership
        self._is_suspect = is_suspect
        self._tell = tell
        self._load = load
        self._clock = clock
        # The host's servers as read right after its force-down; None
        # until then, or when they could not be read.
        self.servers = None

    def handle(self, service):
        """Judge the host and act; whether it was forced down."""
        host = service.host
        settings = monitor_conf.host_settings(self._conf, host)
        try:
            driver = self._load(settings, self._conf.monitor.fence_timeout)
        except stevedore_exc.NoMatches:
            self._tell(host, 'its fence_driver %r does not exist; not '
                             'fenced' % settings.fence_driver)
            return False
        asked_at = self._clock()
        verdict = self._judge(driver, settings)
        if not verdict.failed:
            self._tell(host, verdict.why)
            return False
        LOG.warning('Host %s has failed: %s (judged in %.2f s). Fencing it.',
                    host, verdict.why, self._clock() - asked_at)
        try:
            self._fence_and_force_down(service, driver, settings)
            return True
        except Stale as exc:
            self._tell(host, '%s; judged again at the next look' % exc)
        except fencing.FenceFailed as exc:
            self._tell(host, 'its fence failed (%s): not forced down, its '
                             'servers not evacuated' % exc, logging.ERROR)
        except compute_api.Refused as exc:
            self._tell(host, 'it is fenced but not forced down: %s' % exc,
                       logging.ERROR)
        except compute_api.Unreachable as exc:
            self._tell(host, 'the compute API does not answer (%s); judged '
                             'again at the next look' % exc, logging.ERROR)
        return False

    def _fence_and_force_down(self, service, driver, settings):
        host = service.host
        # The verdict again, on a BMC read of this moment: the host may
        # have been switched on since the judgement. Then the service
        # read again and the lease renewed, last before the power-off.
        status = self._status(driver)
        fresh = self._judge(driver, settings, status)
        if not fresh.failed:
            raise Stale('it is no longer found failed (%s)' % fresh.why)
        self._fresh(service)
        already_off = fencing.fence(
            driver, self._conf.monitor.fence_timeout,
            self._conf.monitor.fence_retries, power=status.power)
        self._force_down(service, driver, already_off)
        LOG.warning('Host %s is fenced (%s) and forced down, disabled%s; '
                    '%s.', host, 'found powered off' if already_off else
                    'powered off', self._marked_shutdown(host),
                    self._to_evacuate(host))

    def _to_evacuate(self, host):
        """How many servers of ``host`` are to be evacuated, said.

        The servers read are kept (:attr:`servers`) for the first batch.
        """
        try:
            self.servers = self._api.servers_on(host)
        except (compute_api.Refused, compute_api.Unreachable) as exc:
            return 'its servers could not be read (%s)' % exc
        count = len(recovery.to_evacuate(self._conf, self.servers, ()))
        if self._conf.monitor.evacuate == monitor_conf.EVACUATE_TAGGED:
            return ('%d server(s) to evacuate (tagged ones only: [monitor] '
                    'evacuate = tagged)' % count)
        return '%d server(s) to evacuate' % count

    def _force_down(self, service, driver, already_off):
        """Force the fenced host down, if it is still what was fenced.

        Its BMC read, its service read, the lease renewed, in that order:
        what may take long (a BMC) comes first, and the write follows the
        renewal at once.
        """
        try:
            power = driver.power_state()
        except drivers.FenceError as exc:
            raise Stale('its BMC cannot be read right before the force-down '
                        '(%s): not forced down' % exc)
        if power != drivers.OFF:
            raise Stale('its BMC says it was switched on again since it was '
                        'fenced: not forced down')
        current, entity_tag = self._fresh(service)
        try:
            self._api.update_service(current.id, {
                'forced_down': True, 'status': 'disabled',
                'disabled_reason': recovery.fenced_reason(already_off)},
                entity_tag=entity_tag)
        except compute_api.Refused as exc:
            if exc.status == 412:
                raise Stale('its service changed since it was read (the '
                            'compute API refused the force-down: 412)')
            raise

    def _marked_shutdown(self, host):
        """Mark the host's servers shut down where the target can; said."""
        try:
            marked = self._api.mark_shutdown(host)
        except (compute_api.Refused, compute_api.Unreachable) as exc:
            LOG.warning('Host %s: its servers could not be marked shut '
                        'down: %s', host, exc)
            return ''
        if marked is None:
            return ''
        return ', its %d server(s) marked shut down' % marked

    def _fresh(self, service):
        """(the service read now, its entity tag), if still to act on.

        Raises Stale when the host is no longer a suspect or this monitor
        no longer leads: the lease is renewed last, right before the
        write that follows.
        """
        current, entity_tag = self._api.service(service)
        if current is None:
            raise Stale('its service is gone')
        if current.forced_down or current.disabled:
            raise Stale('it was forced down or disabled meanwhile')
        if not self._is_suspect(current):
            raise Stale('it is up again')
        if not self._leadership.still_leads():
            raise Stale('this monitor no longer leads')
        return current, entity_tag

    def _judge(self, driver, settings, status=None):
        if status is None:
            status = self._status(driver)
        return confirmation.judge(self._conf.monitor.confirm_with, status,
                                  self._probe(settings))

    @staticmethod
    def _status(driver):
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
