"""Versioned objects; :func:`register_all` makes them known to the registry."""


def register_all():
    __import__('nova_forcedown.objects.aggregate')
    __import__('nova_forcedown.objects.compute_node')
    __import__('nova_forcedown.objects.flavor')
    __import__('nova_forcedown.objects.instance')
    __import__('nova_forcedown.objects.service')
