"""The contract of a fence driver: read the power, switch it off or on."""

import abc

from stevedore import driver as stevedore_driver

DRIVER_NAMESPACE = 'nova_forcedown.monitor.fence_drivers'

ON = 'on'
OFF = 'off'


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
