"""Versioned objects; :func:`register_all` makes them known to the registry."""


def register_all():
    __import__('nova_forcedown.objects.service')
