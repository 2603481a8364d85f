"""Host uptime as the ``uptime`` command prints it."""

import os
import time

PROC_UPTIME = '/proc/uptime'


def read_seconds(path=PROC_UPTIME):
    """Seconds since boot: the first field of /proc/uptime."""
    with open(path) as proc_file:
        return float(proc_file.read().split()[0])


def format_uptime(seconds, now=None, load=None):
    """E.g. `` 10:15:01 up 3 days,  4:05,  load average: 0.00, 0.01, 0.05``.

    The layout of procps ``uptime``, whose output Nova's libvirt driver
    returns, without the count of logged-in users (that needs utmp).
    ``now`` is a ``time.struct_time`` (local time by default), ``load`` the
    three load averages (``os.getloadavg()`` by default).
    """
    now = time.localtime() if now is None else now
    load = os.getloadavg() if load is None else load
    return ' %s up %s,  load average: %.2f, %.2f, %.2f' % (
        time.strftime('%H:%M:%S', now), _duration(seconds), *load)


def _duration(seconds):
    days, minutes = divmod(int(seconds) // 60, 24 * 60)
    hours, minutes = divmod(minutes, 60)
    text = '%d day%s, ' % (days, '' if days == 1 else 's') if days else ''
    if hours:
        return text + '%2d:%02d' % (hours, minutes)
    return text + '%d min' % minutes
