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
        # sushy raises its own errors and requests' for the connection;
        # both say the BMC failed.
        try:
            connection = sushy.Sushy(
                url, verify=settings.redfish_verify,
                auth=auth.BasicAuth(settings.bmc_username or '',
                                    settings.bmc_password or ''),
                read_timeout=self.timeout, connect_timeout=self.timeout,
                server_side_retries=0)
            return request(connection.get_system(self._system(connection)))
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
