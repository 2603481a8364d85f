"""Legacy /v2 extension descriptors, contributed as entry points.

Each entry point in ``nova_forcedown.api.extensions`` names a descriptor
dict (alias, name, namespace, updated, description). An operator disables
one with ``[api] disabled_extensions``.
"""

from stevedore import extension

NAMESPACE = 'nova_forcedown.api.extensions'

HYPERVISOR_STATUS = 'os-hypervisor-status'


def _descriptor(alias, name, namespace, updated, description):
    return {'alias': alias, 'name': name, 'namespace': namespace,
            'updated': updated, 'description': description}


HYPERVISOR_STATUS_EXTENSION = _descriptor(
    HYPERVISOR_STATUS, 'HypervisorStatus',
    'http://docs.openstack.org/compute/ext/hypervisor_status/api/v1.1',
    '2014-04-17T00:00:00Z', 'Show hypervisor status.')

HYPERVISORS_EXTENSION = _descriptor(
    'os-hypervisors', 'Hypervisors',
    'http://docs.openstack.org/compute/ext/hypervisors/api/v1.1',
    '2012-06-21T00:00:00Z', 'Admin-only hypervisor administration.')

SERVICES_EXTENSION = _descriptor(
    'os-services', 'Services',
    'http://docs.openstack.org/compute/ext/services/api/v2',
    '2012-10-28T00:00:00Z', 'Services support.')

EXTENDED_SERVICES_EXTENSION = _descriptor(
    'os-extended-services', 'ExtendedServices',
    'http://docs.openstack.org/compute/ext/extended_services/api/v2',
    '2013-05-17T00:00:00Z', 'Extended services support.')

EXTENDED_SERVICES_DELETE_EXTENSION = _descriptor(
    'os-extended-services-delete', 'ExtendedServicesDelete',
    'http://docs.openstack.org/compute/ext/extended_services_delete/api/v2',
    '2013-12-10T00:00:00Z', 'Extended services deletion support.')


AGGREGATES_EXTENSION = _descriptor(
    'os-aggregates', 'Aggregates',
    'http://docs.openstack.org/compute/ext/aggregates/api/v1.1',
    '2012-01-12T00:00:00Z', 'Admin-only aggregate administration.')

AVAILABILITY_ZONE_EXTENSION = _descriptor(
    'os-availability-zone', 'AvailabilityZone',
    'http://docs.openstack.org/compute/ext/availabilityzone/api/v1.1',
    '2012-12-21T00:00:00Z', 'Availability zones describing.')


def load_enabled(disabled_aliases):
    """Enabled descriptors, sorted by alias."""
    manager = extension.ExtensionManager(NAMESPACE)
    disabled = set(disabled_aliases)
    return sorted((ext.plugin for ext in manager
                   if ext.plugin['alias'] not in disabled),
                  key=lambda descriptor: descriptor['alias'])
