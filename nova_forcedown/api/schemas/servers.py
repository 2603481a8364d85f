"""Server listing and show query schemas, one constant per microversion
window.

Before 2.75 unknown parameters are dropped and repeats allowed; from 2.75
a parameter outside Nova's list is a 400. Values are checked by the
handler, which knows which of them the caller may use.
"""

import copy

_ANY = {'type': 'array', 'items': {'type': 'string'}}
# Nova's regular expression parameters: each value one Python's re
# compiles, not empty (a 400 otherwise, before any filter is dropped).
_REGEX = {'type': 'array', 'items': {'type': 'string', 'format': 'regex'}}
_REGEX_PARAMETERS = (
    'kernel_id', 'ramdisk_id', 'hostname', 'key_name', 'power_state', 'node',
    'flavor', 'reservation_id', 'launched_at', 'terminated_at',
    'availability_zone', 'name', 'display_name', 'description',
    'display_description', 'locked_by', 'root_device_name', 'config_drive',
    'access_ip_v4', 'access_ip_v6', 'auto_disk_config', 'progress')

# Nova's filter and paging parameters of GET /servers[/detail]; the names
# of joined tables are here so that an admin gets Nova's 400 for them.
_PARAMETERS = (
    'user_id', 'project_id', 'tenant_id', 'launch_index', 'image_ref',
    'image', 'kernel_id', 'ramdisk_id', 'hostname', 'key_name',
    'power_state', 'vm_state', 'task_state', 'host', 'node', 'flavor',
    'reservation_id', 'launched_at', 'terminated_at', 'availability_zone',
    'name', 'display_name', 'description', 'display_description',
    'locked_by', 'uuid', 'root_device_name', 'config_drive',
    'access_ip_v4', 'access_ip_v6', 'auto_disk_config', 'progress',
    'sort_key', 'sort_dir', 'all_tenants', 'soft_deleted', 'deleted',
    'status', 'changes-since', 'ip', 'ip6', 'created_at', 'limit',
    'marker', 'block_device_mapping', 'services', 'metadata',
    'pci_devices', 'security_groups', 'info_cache', 'system_metadata',
    'tags', 'tags-any', 'not-tags', 'not-tags-any')

INDEX_QUERY = {
    'type': 'object',
    'properties': {name: _REGEX if name in _REGEX_PARAMETERS else _ANY
                   for name in _PARAMETERS},
    'additionalProperties': True,
}

# 2.66: changes-before.
INDEX_QUERY_V266 = copy.deepcopy(INDEX_QUERY)
INDEX_QUERY_V266['properties']['changes-before'] = _ANY

# 2.73: locked.
INDEX_QUERY_V273 = copy.deepcopy(INDEX_QUERY_V266)
INDEX_QUERY_V273['properties']['locked'] = _ANY

# 2.75 and later: anything else is refused.
INDEX_QUERY_V275 = copy.deepcopy(INDEX_QUERY_V273)
INDEX_QUERY_V275['additionalProperties'] = False

# GET /servers/{id}: parameters ignored, refused from 2.102.
SHOW_QUERY = {
    'type': 'object',
    'properties': {},
    'additionalProperties': True,
}
SHOW_QUERY_V2102 = copy.deepcopy(SHOW_QUERY)
SHOW_QUERY_V2102['additionalProperties'] = False
