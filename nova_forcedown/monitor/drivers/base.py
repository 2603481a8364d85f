"""The contract of a fence driver: read the power, switch it off or on."""

import abc
import collections
import threading
import time

from stevedore import driver as stevedore_driver

from nova_forcedown import background

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


# One lock per BMC a driver calls through call_within, made on its first
# call and kept: one per BMC the monitor knows.
_BMC_LOCKS = {}


def call_within(timeout, bmc, function, name):
    """What ``function()`` returns, if it ends within ``timeout`` seconds.

    ``bmc``: a key naming the BMC called (its address, port and user);
    ``name``: how an error names it. What ``function`` raises is raised
    again. FenceError when it has not ended in time ("no answer within
    N s"): it runs on in a daemon thread (:class:`background.Call`) until
    its library gives up, and nobody waits for it any more.

    One call per BMC at a time: the call holds its BMC's lock from its
    start to its end, even abandoned, so a BMC that hangs costs at most
    one thread, and the next call to it waits for that one within its own
    timeout. A call to another BMC never waits for it.
    """
    deadline = time.monotonic() + timeout
    # setdefault is atomic: two first calls get the same lock.
    lock = _BMC_LOCKS.setdefault(bmc, threading.Lock())
    if not lock.acquire(timeout=timeout):
        raise FenceError('%s: no answer within %g s (its call before this '
                         'one has not ended)' % (name, timeout))

    def locked():
        try:
            return function()
        finally:
            lock.release()

    try:
        call = background.Call(locked, name)
    except RuntimeError as exc:  # no thread to be had
        lock.release()
        raise FenceError('%s: %s' % (name, exc))
    if not call.wait(deadline - time.monotonic()):
        raise FenceError('%s: no answer within %g s' % (name, timeout))
    return call.result()


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
