"""A server's ``host_status``: what its host's compute service is, as Nova
derives it, so a user sees on the server itself that its host was fenced.

First match wins: no host or no compute service -> ""; forced down ->
DOWN (at once, whatever the heartbeat); disabled -> MAINTENANCE; up -> UP;
otherwise (the heartbeat is stale) UNKNOWN.
"""

UP = 'UP'
DOWN = 'DOWN'
MAINTENANCE = 'MAINTENANCE'
UNKNOWN = 'UNKNOWN'
NONE = ''


def host_status(service, is_up):
    """The host_status of a server on ``service``'s host.

    ``service`` is the host's nova-compute service or None;
    ``is_up(service)`` the servicegroup's liveness.
    """
    if service is None:
        return NONE
    if service.forced_down:
        return DOWN
    if service.disabled:
        return MAINTENANCE
    if is_up(service):
        return UP
    return UNKNOWN
