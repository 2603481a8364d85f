"""The contract of a fence driver: read the power, switch it off or on."""

import abc
import collections

from stevedore import driver as stevedore_driver

DRIVER_NAMESPACE = 'nova_forcedown.monitor.fence_drivers'

ON = 'on'
OFF = 'off'

# What a BMC says of the host's health, best first; None: it cannot say.
OK = 'ok'
WARNING = 'warning'
CRITICAL = 'critical'
HEALTH_ORDER = (OK, WARNING, CRITICAL)

# power: ON or OFF. health: OK, WARNING, CRITICAL or None. faults: what
# the BMC names as wrong, for the log.
BmcStatus = collections.namedtuple('BmcStatus', ('power', 'health', 'faults'))


def worst(*healths):
    """The worst of ``healths`` that are known, else None."""
    known = [health for health in healths if health in HEALTH_ORDER]
    return max(known, key=HEALTH_ORDER.index) if known else None


class FenceError(Exception):
    """The BMC could not be reached, or refused, or answered nonsense."""


class FenceDriver(metaclass=abc.ABCMeta):
    """The power of one host, through its BMC.

    ``settings``: the host's :class:`nova_forcedown.conf.monitor.HostSettings`.
    ``timeout``: seconds one call may take. Each method raises
    :class:`FenceError` when it cannot do what it says.
    """

    def __init__(self, settings, timeout):
        self.settings = settings
        self.timeout = timeout

    def address(self):
        """The BMC's address; FenceError when the host's section has none."""
        if not self.settings.bmc_address:
            raise FenceError('no bmc_address in [monitor_host:%s]'
                             % self.settings.host)
        return self.settings.bmc_address

    @abc.abstractmethod
    def power_state(self):
        """:data:`ON` or :data:`OFF`, as the BMC says."""

    def status(self):
        """A :class:`BmcStatus`: the power, and the health if it is read.

        A driver that reads both in one request says both; this one reads
        the power alone.
        """
        return BmcStatus(self.power_state(), None, ())

    @abc.abstractmethod
    def power_off(self):
        """Switch the host off at once (no clean shutdown)."""

    @abc.abstractmethod
    def power_on(self):
        """Switch the host on."""


def load(settings, timeout):
    """The driver ``settings.fence_driver`` names, for that host."""
    return stevedore_driver.DriverManager(
        DRIVER_NAMESPACE, settings.fence_driver, invoke_on_load=True,
        invoke_args=(settings, timeout)).driver
