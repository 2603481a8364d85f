"""[fencing] options: the guard against fence storms.

A fault monitor gone wrong (a partitioned network, a broken check) can
force down every compute host of a zone at once, and their instances are
then evacuated onto nothing. ``max_forced_down_fraction`` refuses the
force-down, or the change of a zone's hosts, that would put more than that
share of a zone's compute hosts forced down.
"""

from oslo_config import cfg
from oslo_config import types

GROUP = 'fencing'


class Fraction(types.Float):
    """A float greater than 0 and at most 1."""

    def __init__(self):
        super().__init__(min=0.0, max=1.0, type_name='fraction in (0, 1]')

    def __call__(self, value):
        number = super().__call__(value)
        if number == 0:
            raise ValueError('Should be greater than 0, at most 1')
        return number


FENCING_OPTS = [
    cfg.Opt('max_forced_down_fraction', type=Fraction(),
            help='Largest fraction (greater than 0, at most 1) of the '
                 'compute hosts of an availability zone that may be forced '
                 'down at once. A change that would leave a zone it changes '
                 'with more of them forced down, and a larger share than '
                 'before, is refused with 409, naming the zone and the '
                 'counts: a force-down (API or nova-forcedown-manage), a '
                 'host added to or removed from an aggregate with a zone, '
                 'an aggregate\'s zone set or changed, a compute service '
                 'deleted. A change that keeps or lowers a zone\'s share is '
                 'never refused. An operator who means it raises this '
                 'value. A host in no zone aggregate is in [DEFAULT] '
                 'default_availability_zone. Unset (the default): no '
                 'limit, and a force-down stays one UPDATE and its history '
                 'record.'),
]


def register_opts(conf):
    conf.register_opts(FENCING_OPTS, group=GROUP)


def list_opts():
    return {GROUP: FENCING_OPTS}
