"""The words every listing uses for a service, in the API and on the
command line alike: ``state`` is up or down (liveness, from the
servicegroup driver), ``status`` is enabled or disabled (the admin's flag).
"""


def state(is_up):
    return 'up' if is_up else 'down'


def status(service):
    return 'disabled' if service.disabled else 'enabled'
