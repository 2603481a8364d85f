"""os-availability-zone query schemas, one constant per microversion window."""

import copy

# GET /os-availability-zone[/detail], 2.1 - 2.101: no parameters; others
# are dropped.
INDEX_QUERY = {
    'type': 'object',
    'properties': {},
    'additionalProperties': True,
}

# 2.102 and later: any parameter is refused.
INDEX_QUERY_V2102 = copy.deepcopy(INDEX_QUERY)
INDEX_QUERY_V2102['additionalProperties'] = False
