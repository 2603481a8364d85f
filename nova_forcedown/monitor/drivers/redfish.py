"""Redfish, with sushy: the BMCs of current servers over HTTPS.

The host's system is ``redfish_system`` (its path, such as
``/redfish/v1/Systems/1``), or the only system its BMC has.
"""

import sushy
from sushy import auth

from nova_forcedown.monitor.drivers import base

REDFISH_PORT = 443

# Power states that still run the host.
_OFF = (sushy.POWER_STATE_OFF,)

# A call is up to four requests (the service root, the systems when
# redfish_system is not set, the system, the reset), each bounded by
# sushy's connect and read timeouts, and sushy's connector tries a request
# that times out or fails to connect three times, 3 s apart, whenever
# server_side_retries is 0 (Connector._op: "retries =
# self._server_side_retries or 3", and Sushy's server_side_retries_delay
# of 3 s between them): a BMC that does not answer held a call for
# 3 * timeout + 6 s per request. Hence one try (a GET answered 5xx is
# tried once more, at once), and the whole call bounded by
# base.call_within. A call abandoned there ends when its request does:
# within timeout of the BMC's last byte.
_ONE_TRY = 1

_HEALTH = {sushy.Health.OK: base.OK, sushy.Health.WARNING: base.WARNING,
           sushy.Health.CRITICAL: base.CRITICAL}


class RedfishDriver(base.FenceDriver):
    """Power and health from the host's ComputerSystem: one GET.

    The health is the worse of the system's own and its rollup (its
    processors, memory, storage...).
    """

    def power_state(self):
        return self.status().power

    def status(self):
        return self._call(system_status)

    def power_off(self):
        self._call(lambda system: system.reset_system(sushy.RESET_FORCE_OFF))

    def power_on(self):
        self._call(lambda system: system.reset_system(sushy.RESET_ON))

    @property
    def url(self):
        settings = self.settings
        return '%s://%s:%s' % (settings.redfish_scheme, self.address(),
                               settings.bmc_port or REDFISH_PORT)

    def _call(self, request):
        settings = self.settings
        url = self.url

        def call():
            connection = sushy.Sushy(
                url, verify=settings.redfish_verify,
                auth=auth.BasicAuth(settings.bmc_username or '',
                                    settings.bmc_password or ''),
                read_timeout=self.timeout, connect_timeout=self.timeout,
                server_side_retries=_ONE_TRY, server_side_retries_delay=0)
            return request(connection.get_system(self._system(connection)))

        # sushy raises its own errors and requests' for the connection;
        # both say the BMC failed.
        try:
            return base.call_within(self.timeout,
                                    (url, settings.bmc_username), call,
                                    'Redfish %s' % url)
        except base.FenceError:
            raise
        except Exception as exc:  # noqa
            raise base.FenceError('Redfish %s: %s' % (url, exc))

    def _system(self, connection):
        if self.settings.redfish_system:
            return self.settings.redfish_system
        members = connection.get_system_collection().members_identities
        if len(members) != 1:
            raise base.FenceError('%d systems: set redfish_system in '
                                  '[monitor_host:%s]' % (
                                      len(members), self.settings.host))
        return members[0]


def system_status(system):
    """The :class:`base.BmcStatus` of a sushy ComputerSystem."""
    status = system.status
    said = {'Health': status and status.health,
            'HealthRollup': status and status.health_rollup}
    return base.BmcStatus(
        base.OFF if system.power_state in _OFF else base.ON,
        base.worst(*(_HEALTH.get(value) for value in said.values())),
        tuple('%s %s' % (name, value.value) for name, value in said.items()
              if value not in (None, sushy.Health.OK)))
