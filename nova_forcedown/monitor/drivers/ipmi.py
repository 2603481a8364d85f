"""IPMI 2.0 over LAN (RMCP+), with pyghmi: what every server's BMC speaks."""

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

# How pyghmi (pyghmi.ipmi.private.session) times out, and why each call
# runs in base.call_within:
#
# - It has no bound on a call. Session's retry timer starts at 0.5 to 1 s
#   (initialtimeout, randomised), grows by 1 s a try up to maxtimeout (2 s
#   while logging in, 4 s once logged in) and then logs in again once
#   (logontries) before it gives up (_timedout, _relog); awaitresponse
#   gives up only after twice _getmaxtimeout(). A BMC silent from the
#   start fails the login after 4 to 6 s; one that stops answering a
#   session already open takes about 28 s. raw_command's ``timeout`` sets
#   the first try's wait only, and the login takes none.
# - It shares one Session per BMC, user and password (Session.__new__,
#   keyed in the class-wide Session.bmc_handlers and initting_sessions),
#   by every Command and thread, kept alive by keepalives; its sockets
#   (up to MAX_BMCS_PER_SOCKET BMCs each) are read by one I/O thread
#   (_IOWorker) which hands each packet to its session's queue. Callers
#   in several threads are its design (the waits are per session, the
#   shared tables under WAITING_SESSIONS and KEEPALIVE_SESSIONS, commands
#   on one session queued by Session.atomicop and incommand), so calls to
#   different BMCs need no lock.
# - But Session.__new__ looks a BMC's session up and registers a new one
#   without a lock: two threads logging in to the same BMC at once may
#   both make one, on the same socket, and the second replaces the first
#   in Session.bmc_handlers[address][port], so the first one's answers
#   go to the second and it hangs. call_within serialises the calls to
#   one BMC (address, port, user), which also keeps to one the threads a
#   hung BMC holds.


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
        name = 'IPMI %s:%s' % (address, port)

        def call():
            return request(command.Command(
                address, _bytes(settings.bmc_username),
                _bytes(settings.bmc_password), port=port))

        try:
            answer = base.call_within(
                self.timeout, (address, port, settings.bmc_username), call,
                name)
        except base.FenceError:
            raise
        # pyghmi raises its own errors, OSError, and for a session gone
        # wrong plain TypeErrors and the like: all say the BMC failed.
        except Exception as exc:  # noqa
            raise base.FenceError('%s: %s' % (name, _said(exc)))
        if isinstance(answer, dict) and 'error' in answer:
            raise base.FenceError('%s: %s' % (name, answer['error']))
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
