"""Aggregate views: pure functions of (aggregate, version).

Aggregates are deleted, not soft-deleted, so ``deleted`` is always false
and ``deleted_at`` null; Nova shows both.
"""

from nova_forcedown.api import microversion
from nova_forcedown.objects import base as objects_base


def aggregate(aggregate, version):
    """The aggregate with its hosts and metadata: every answer but create."""
    view = created(aggregate, version)
    view['hosts'] = list(aggregate.hosts)
    view['metadata'] = dict(aggregate.metadata)
    return view


def created(aggregate, version):
    """The answer to a create, which has no hosts and no metadata."""
    view = {
        'id': aggregate.id,
        'name': aggregate.name,
        'availability_zone': aggregate.availability_zone,
        'created_at': objects_base.timestamp(aggregate.created_at),
        'updated_at': objects_base.timestamp(aggregate.updated_at),
        'deleted': False,
        'deleted_at': None,
    }
    if version.matches(microversion.V2_41):
        view['uuid'] = aggregate.uuid
    return view
