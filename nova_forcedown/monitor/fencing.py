"""Fence a host: switch it off and see it off, or say it failed.

A fence that cannot be confirmed leaves the host as it is: the monitor
then never forces it down nor evacuates its servers, since they may
still run there.
"""

import time

from nova_forcedown.monitor.drivers import base

# Seconds between two reads of the power while waiting for it to go off.
POLL_INTERVAL = 0.2


class FenceFailed(Exception):
    """The host could not be seen powered off."""


def fence(driver, timeout, retries, clock=time.monotonic, sleep=time.sleep,
          power=None):
    """Switch the host of ``driver`` off and wait to see it off.

    Returns whether it was already off: ``power``, what its BMC just said,
    or read now. Each of ``retries + 1`` attempts switches it off and reads
    its power until off, for up to ``timeout`` seconds. Raises FenceFailed
    with the last error.
    """
    last = 'still powered on'
    try:
        if (power or driver.power_state()) == base.OFF:
            return True
    except base.FenceError as exc:
        last = exc
    for _ in range(retries + 1):
        try:
            driver.power_off()
            if _seen_off(driver, clock() + timeout, clock, sleep):
                return False
            last = 'still powered on after %s s' % timeout
        except base.FenceError as exc:
            last = exc
    raise FenceFailed(str(last))


def _seen_off(driver, deadline, clock, sleep):
    while True:
        if driver.power_state() == base.OFF:
            return True
        if clock() >= deadline:
            return False
        sleep(POLL_INTERVAL)
