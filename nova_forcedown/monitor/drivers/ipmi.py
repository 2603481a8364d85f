"""IPMI 2.0 over LAN (RMCP+), with pyghmi: what every server's BMC speaks."""

import threading

from pyghmi.ipmi import command

from nova_forcedown.monitor.drivers import base

IPMI_PORT = 623

# pyghmi keeps one session per BMC and user, shared by every Command made
# for them (so never logged out here), and its sockets and queues at
# module level; one call at a time keeps them consistent across threads.
_SESSIONS = threading.Lock()


class IpmiDriver(base.FenceDriver):

    def power_state(self):
        state = self._call(lambda bmc: bmc.get_power())
        return base.OFF if state.get('powerstate') == 'off' else base.ON

    def power_off(self):
        self._call(lambda bmc: bmc.set_power('off'))

    def power_on(self):
        self._call(lambda bmc: bmc.set_power('on'))

    def _call(self, request):
        settings = self.settings
        address = self.address()
        try:
            with _SESSIONS:
                answer = request(command.Command(
                    address, _bytes(settings.bmc_username),
                    _bytes(settings.bmc_password),
                    port=settings.bmc_port or IPMI_PORT))
        # pyghmi raises its own errors, OSError, and for a session gone
        # wrong plain TypeErrors and the like: all say the BMC failed.
        except Exception as exc:  # noqa
            raise base.FenceError('IPMI %s:%s: %s' % (
                settings.bmc_address, settings.bmc_port, exc))
        if isinstance(answer, dict) and 'error' in answer:
            raise base.FenceError('IPMI %s:%s: %s' % (
                settings.bmc_address, settings.bmc_port, answer['error']))
        return answer


def _bytes(text):
    """As pyghmi keeps it: a str here would miss the session it has."""
    return (text or '').encode('utf-8')
