"""Whether a host whose service is down has failed: a second opinion.

The servicegroup says only that a host's agent stopped heartbeating. The
host is failed, and may be fenced, only when a channel independent of the
agent agrees: its BMC says it is powered off, or powered on with a
critical fault (a power fault, say), or its management address does not
answer while its BMC says it is powered on (it hangs). Anything that says
the host is alive, or that cannot be read, keeps it unfenced.
"""

import collections
import socket

from nova_forcedown.conf import monitor as monitor_conf
from nova_forcedown.monitor.drivers import base

# failed: whether to fence; why: what the monitor says of the host.
Verdict = collections.namedtuple('Verdict', ('failed', 'why'))

UNREAD = None


def probe(address, port, timeout):
    """Whether ``address`` answers a TCP connection to ``port``.

    A refused connection is an answer: the host's kernel runs.
    """
    try:
        with socket.create_connection((address, port), timeout=timeout):
            return True
    except ConnectionRefusedError:
        return True
    except OSError:
        return False


def judge(channels, status, reachable):
    """The :class:`Verdict` on a host whose service is down.

    ``channels``: [monitor] confirm_with. ``status``: what its BMC says (a
    :class:`base.BmcStatus`, or a FenceError's text when it cannot be
    read). ``reachable``: the probe's answer, None when not probed.
    """
    if reachable:
        return Verdict(False, 'its management address answers: its agent '
                              'alone is down; not fenced')
    if not isinstance(status, base.BmcStatus):
        return Verdict(False, 'its BMC cannot be read (%s): it cannot be '
                              'fenced, so it is not recovered' % status)
    by_bmc = monitor_conf.BMC in channels
    if by_bmc and status.power == base.OFF:
        return Verdict(True, 'its BMC says it is powered off')
    said = 'its BMC says it is powered %s%s' % (
        status.power, _health(status))
    if by_bmc and status.health == base.CRITICAL:
        return Verdict(True, said)
    if reachable is False:
        return Verdict(True, 'its management address does not answer and ' +
                       said)
    if monitor_conf.PROBE in channels:
        return Verdict(False, 'it has no management_address to probe; '
                              'not fenced')
    return Verdict(False, said + ': its agent alone is down (add probe to '
                   '[monitor] confirm_with to fence a host that hangs '
                   'powered on); not fenced')


def _health(status):
    if status.health is None:
        return ''
    if status.health == base.OK:
        return ' and healthy'
    return ' with a %s fault (%s)' % (status.health,
                                      ', '.join(status.faults))
