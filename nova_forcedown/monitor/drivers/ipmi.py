"""IPMI 2.0 over LAN (RMCP+), with pyghmi: what every server's BMC speaks."""

import threading

from pyghmi.ipmi import command

from nova_forcedown.monitor.drivers import base

IPMI_PORT = 623

# Get Chassis Status (network function chassis, command 1): byte and bit
# of each fault it reports, as ipmitool's "chassis status" names them.
_CHASSIS = 0
_GET_CHASSIS_STATUS = 1
_POWER_ON_BIT = 0x01
_CHASSIS_FAULTS = (
    ('Power Overload', 0, 0x02, base.CRITICAL),
    ('Main Power Fault', 0, 0x08, base.CRITICAL),
    ('Power Control Fault', 0, 0x10, base.CRITICAL),
    ('Drive Fault', 2, 0x04, base.WARNING),
    ('Cooling/Fan Fault', 2, 0x08, base.WARNING),
)

# pyghmi keeps one session per BMC and user, shared by every Command made
# for them (so never logged out here), and its sockets and queues at
# module level; one call at a time keeps them consistent across threads.
_SESSIONS = threading.Lock()


class IpmiDriver(base.FenceDriver):
    """Power and health from the chassis status: one round trip.

    The health is the chassis' fault bits, which every BMC keeps; the
    sensors would say more but take a request each.
    """

    def power_state(self):
        return self.status().power

    def status(self):
        answer = self._call(lambda bmc: bmc.raw_command(
            netfn=_CHASSIS, command=_GET_CHASSIS_STATUS))
        return chassis_status(bytearray(answer.get('data') or b''))

    def power_off(self):
        self._call(lambda bmc: bmc.set_power('off'))

    def power_on(self):
        self._call(lambda bmc: bmc.set_power('on'))

    def _call(self, request):
        settings = self.settings
        address = self.address()
        port = settings.bmc_port or IPMI_PORT
        try:
            with _SESSIONS:
                answer = request(command.Command(
                    address, _bytes(settings.bmc_username),
                    _bytes(settings.bmc_password), port=port))
        # pyghmi raises its own errors, OSError, and for a session gone
        # wrong plain TypeErrors and the like: all say the BMC failed.
        except Exception as exc:  # noqa
            raise base.FenceError('IPMI %s:%s: %s' % (address, port,
                                                      _said(exc)))
        if isinstance(answer, dict) and 'error' in answer:
            raise base.FenceError('IPMI %s:%s: %s' % (address, port,
                                                      answer['error']))
        return answer


def _said(exc):
    """What a pyghmi error says: nothing, of a BMC that never answers."""
    text = str(exc)
    return 'no answer' if text in ('', 'None') else text


def chassis_status(data):
    """The :class:`base.BmcStatus` a Get Chassis Status answer says."""
    if len(data) < 3:
        raise base.FenceError('IPMI chassis status of %d bytes' % len(data))
    faults = [(name, health) for name, byte, bit, health in _CHASSIS_FAULTS
              if data[byte] & bit]
    return base.BmcStatus(
        base.ON if data[0] & _POWER_ON_BIT else base.OFF,
        base.worst(base.OK, *(health for _, health in faults)),
        tuple(name for name, _ in faults))


def _bytes(text):
    """As pyghmi keeps it: a str here would miss the session it has."""
    return (text or '').encode('utf-8')
