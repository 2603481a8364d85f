"""The fence-storm guard: no change may force down most of a zone.

With ``[fencing] max_forced_down_fraction`` set, a change is refused when
it would leave a zone it changes with more than that fraction of its
compute hosts forced down *and* a larger share of them forced down than
before. One rule for every change that moves the share: a force-down, a
host added to or removed from an aggregate that has a zone, an
aggregate's zone set, changed or unset, a compute service deleted. A
change that leaves a zone's share as it was (forcing down a host forced
down already) or lowers it (adding a healthy host, removing a forced-down
one) is never refused, even in a zone already over the limit: that is
how an operator brings it back.

The operation that makes the change calls :func:`lock_checked` in its
transaction; the zones' compute services are then locked until it
commits (:mod:`nova_forcedown.db.zone_counts` says how), so two changes
of one zone are judged one after the other.
"""

import collections

from nova_forcedown.db import zone_counts

Delta = zone_counts.Delta


class FencingLimit(collections.namedtuple(
        'FencingLimit', ('max_forced_down_fraction', 'default_zone'))):
    """The guard's settings: the fraction, and the zone of unzoned hosts."""

    @classmethod
    def from_conf(cls, conf):
        """The settings of ``conf``; None (no guard) without them."""
        if conf is None or conf.fencing.max_forced_down_fraction is None:
            return None
        return cls(conf.fencing.max_forced_down_fraction,
                   conf.default_availability_zone)


def breaks_limit(before, after, fraction):
    """Whether a zone's change from ``before`` to ``after`` breaks the rule.

    Both are ZoneCounts; the rule is broken when more than ``fraction`` of
    the zone is forced down after, a larger share than before.
    """
    if not after.total or after.forced / after.total <= fraction:
        return False
    return (not before.total or
            after.forced * before.total > before.forced * after.total)


def lock_checked(context, limit, delta, refused):
    """Lock the compute services of the zones ``delta`` changes, and judge.

    ``limit`` is a :class:`FencingLimit`. Raises ``refused(counts=...,
    fraction=...)`` (an exception; ``counts`` names each zone that would
    pass the limit, with its counts after the change) when the change
    breaks the rule; the caller's transaction then writes nothing. Returns
    the rows locked, {service id: (id, host, forced_down)}.
    """
    counts, rows = zone_counts.lock_and_count(context, limit.default_zone,
                                              delta)
    over = [after for before, after in counts
            if breaks_limit(before, after, limit.max_forced_down_fraction)]
    if over:
        raise refused(counts=' and '.join(str(count) for count in over),
                      fraction=limit.max_forced_down_fraction)
    return rows
