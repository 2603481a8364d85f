"""Migration views, as Nova renders them at each microversion."""

from nova_forcedown.api import microversion
from nova_forcedown.objects import base

_KEYS = ('id', 'status', 'instance_uuid', 'source_compute', 'source_node',
         'dest_compute', 'dest_node', 'dest_host', 'old_instance_type_id',
         'new_instance_type_id')
_HOST_KEYS = ('source_compute', 'source_node', 'dest_compute', 'dest_node',
              'dest_host')


def migration(record, version, show_hosts):
    """One migration; host and node fields null unless ``show_hosts``."""
    view = {key: getattr(record, key) for key in _KEYS}
    if not show_hosts:
        view.update({key: None for key in _HOST_KEYS})
    view['created_at'] = base.timestamp(record.created_at)
    view['updated_at'] = base.timestamp(record.updated_at)
    if version.matches(microversion.V2_23):
        view['migration_type'] = record.migration_type
    if version.matches(microversion.V2_59):
        view['uuid'] = record.uuid
    if version.matches(microversion.V2_80):
        view['user_id'] = record.user_id
        view['project_id'] = record.project_id
    return view
