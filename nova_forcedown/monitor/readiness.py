"""Whether each watched host could be fenced, found before it fails.

A BMC with a wrong password or address is otherwise found when its host
has failed, the one moment it matters: that host is then neither fenced
nor recovered. Every ``[monitor] bmc_check_interval`` the leading monitor
reads the power of each watched host through its fence driver, as
Pacemaker monitors a fence device, and names each host it could not
fence, until it can. A host that becomes watched in between (a new host,
one enabled or forced up again) is checked as soon as the monitor sees it:
a host added with a wrong BMC password is named within seconds, not at
the next check.
"""

import time

from oslo_log import log as logging
from stevedore import exception as stevedore_exc

from nova_forcedown import condition_log
from nova_forcedown.conf import monitor as monitor_conf
from nova_forcedown import exception
from nova_forcedown.monitor.drivers import base as drivers
from nova_forcedown import periodic

LOG = logging.getLogger(__name__)

# Seconds between two reads of a check. The IPMI driver reads one BMC at
# a time in the process; the pause lets a fence of the monitor's loop take
# its turn, so a check delays a fence by one read at most (about 5 s for a
# BMC that does not answer, pyghmi's retries).
PAUSE_BETWEEN_READS = 0.1

CANNOT_FENCE = condition_log.Messages(
    level=logging.ERROR,
    started='Host %(names)s cannot be fenced: %(why)s. Were it to fail, '
            'the monitor would neither force it down nor evacuate its '
            'servers; fix its [monitor_host:%(names)s] section (or the '
            '[monitor] defaults).',
    reminder='Host %(names)s still cannot be fenced, after %(seconds)d s: '
             '%(why)s.',
    ended='Host %(names)s can be fenced again: its fence driver reads its '
          'power, after %(seconds)d s.')


class FenceReadiness(periodic.Ticker):
    """Checks the fence drivers of the watched hosts while leading.

    It looks every ``[monitor] interval`` whether a check is due, so that
    a monitor that starts leading checks at once, and which hosts are
    newly watched. The watched hosts are those of the monitor's last look
    (``watched()``, None before it); it reads the state of ``leadership``
    that the monitor's own loop keeps, never the lock nor the database.
    """

    def __init__(self, conf, leadership, watched, clock=time.monotonic,
                 load=drivers.load, sleep=time.sleep):
        super().__init__(conf.monitor.interval, 'bmc-check')
        self._conf = conf
        self._load = load
        self._sleep = sleep
        self._leadership = leadership
        self._watched = watched
        self._clock = clock
        self._checked_at = None
        self._summarized = False
        # The watched hosts at the last tick.
        self._known = frozenset()
        # host -> (why, its ConditionLog), while it cannot be fenced.
        self._failing = {}

    def tick(self):
        if not self._leadership.leading:
            self._checked_at = None
            return
        hosts = self._watched()
        if hosts is None:
            return
        if self._due():
            self.check(sorted(hosts))
            # The interval counts from the end: a long check is not
            # repeated at once.
            self._checked_at = self._clock()
        else:
            self.check_new(sorted(hosts - self._known))
        self._known = hosts

    def _due(self):
        if self._checked_at is None:
            return True
        since = self._clock() - self._checked_at
        return since >= self._conf.monitor.bmc_check_interval

    def check(self, hosts):
        """Read each host's power; say which cannot be fenced, if changed."""
        problems = self._problems(hosts)
        if problems is None:
            return
        for host in set(self._failing) - set(problems):
            # A host no longer watched (forced down, disabled, deleted)
            # leaves without a word.
            self._failing.pop(host)[1].update(
                [], forget=() if host in hosts else [host])
        self._tell_all(problems)
        if not self._summarized:
            self._summarized = True
            LOG.info('Fence drivers checked: %d of %d watched compute hosts '
                     'can be fenced; checked again every %d s.',
                     len(hosts) - len(problems), len(hosts),
                     self._conf.monitor.bmc_check_interval)

    def check_new(self, hosts):
        """Check ``hosts``, newly watched, and say how many can be fenced."""
        if not hosts:
            return
        problems = self._problems(hosts)
        if problems is None:
            return
        for host in (set(hosts) & set(self._failing)) - set(problems):
            self._failing.pop(host)[1].update([])
        self._tell_all(problems)
        LOG.info('Fence drivers checked for %d newly watched compute '
                 'host(s) (%s): %d can be fenced.', len(hosts),
                 condition_log.describe(hosts), len(hosts) - len(problems))

    def _problems(self, hosts):
        """{host: why} of those of ``hosts`` that cannot be fenced.

        None when leadership is lost meanwhile: a standby reads no BMC.
        """
        problems = {}
        for host in hosts:
            if not self._leadership.leading:
                return None
            why = self.problem(host)
            if why is not None:
                problems[host] = why
            self._sleep(PAUSE_BETWEEN_READS)
        return problems

    def _tell_all(self, problems):
        for host, why in problems.items():
            self._tell(host, why)

    def problem(self, host):
        """Why ``host`` could not be fenced now, or None."""
        return fence_status(self._conf, host, self._load)[1]

    def _tell(self, host, why):
        said = self._failing.get(host)
        if said is not None and said[0] != why:
            # Another reason: said as a new condition, without "again".
            said[1].update([], forget=[host])
            said = None
        if said is None:
            said = (why, condition_log.ConditionLog(
                LOG, CANNOT_FENCE, self._conf.log_reminder_interval,
                self._clock))
            self._failing[host] = said
        said[1].update([host], why=why)


def fence_status(conf, host, load=drivers.load):
    """What ``host``'s fence driver reads of it: (BmcStatus, None).

    (None, why) when it cannot read it, and so could not fence the host.
    """
    settings = monitor_conf.host_settings(conf, host)
    try:
        return load(settings, conf.monitor.fence_timeout).status(), None
    except stevedore_exc.NoMatches:
        why = 'its fence_driver %r does not exist' % settings.fence_driver
    except drivers.FenceError as exc:
        why = 'its BMC cannot be read (%s)' % exc
    except Exception as exc:  # noqa: a driver that fails cannot fence
        why = 'its fence driver fails (%s)' % exception.first_line(exc)
    return None, why
