"""A server's metadata: the user's key/value pairs, written as Nova does.

Masakari and other instance-HA tools read it (``HA_Enabled=True`` marks
a server to recover); operators write it with ``openstack server set
--property``. Each write is one transaction on the server's locked row,
with Nova's checks in Nova's order: the key to delete exists (404), a
locked server refuses anyone but an admin (409), the server is launched,
in a state that allows it and runs no task (409), and the result holds
no more than ``[quota] metadata_items`` items (403).
"""

from oslo_serialization import jsonutils

from nova_forcedown.db import engine as db_engine
from nova_forcedown.db import instances as db_instances
from nova_forcedown import exception
from nova_forcedown.objects import instance as instance_obj
from nova_forcedown.objects import instance_operations as operations

# The vm_states in which Nova lets a server's metadata change.
WRITABLE_STATES = (operations.ACTIVE, 'paused', 'suspended',
                   operations.STOPPED)

# The action names Nova's conflicts say.
UPDATE = 'update metadata'
DELETE = 'delete metadata'

UNLIMITED = -1


def update(context, uuid, metadata, limit, replace=False, project_id=None):
    """Merge ``metadata`` into the server's (replace it, with ``replace``).

    Returns the server's metadata as it now is.
    """

    def change(current):
        return dict(metadata) if replace else dict(current, **metadata)

    return _written(context, uuid, change, UPDATE, limit, project_id)


def delete_item(context, uuid, key, project_id=None):
    """Remove the item ``key``; MetadataItemNotFound if there is none."""

    def change(current):
        if key not in current:
            raise exception.MetadataItemNotFound()
        return {name: value for name, value in current.items()
                if name != key}

    _written(context, uuid, change, DELETE, UNLIMITED, project_id)


@db_engine.writer
def _written(context, uuid, change, action, limit, project_id):
    row = db_instances.instance_get_locked(context, uuid, project_id)
    server = instance_obj.decoded(row)
    metadata = change(server.user_metadata)
    if server.locked_by is not None and not context.is_admin:
        raise exception.InstanceIsLocked(instance_uuid=server.uuid)
    operations.check_state(server, action, WRITABLE_STATES)
    if limit != UNLIMITED and len(metadata) > limit:
        raise exception.MetadataLimitExceeded(allowed=limit)
    db_instances.instance_update(
        context, row, {'user_metadata': jsonutils.dumps(metadata)})
    return metadata
