"""The compute API the monitor acts through: any endpoint that speaks Nova's.

OpenStack Nova (2.53 or later) and this project's API alike. Every request
names its microversion: 2.53 for services (by UUID) and what is read,
the evacuation at 2.94 or at 2.95 and later, where Nova leaves an
evacuated server stopped (``[monitor] evacuated_state``). What only
this project's API has is found by asking, never assumed: a service's
entity tag (``GET /os-services/{id}``, then ``If-Match`` on the write) and
the host-wide mark-shutdown; Nova answers 404 or 405 to both.
"""

import collections

from keystoneauth1 import exceptions as ks_exc
from keystoneauth1 import loading as ks_loading
from oslo_log import log as logging

from nova_forcedown.conf import compute_api as compute_api_conf

LOG = logging.getLogger(__name__)

# What the monitor needs at least: services by UUID, forced_down in
# their updates.
MIN_VERSION = (2, 53)
READ_VERSION = '2.53'
# The last microversion whose evacuation brings an active server back
# active; from the next one Nova leaves every evacuated server stopped.
EVACUATE_ACTIVE_VERSION = '2.94'
EVACUATE_STOPPED_VERSION = '2.95'

# Statuses of an evacuation that is over, in Nova and here.
MIGRATION_ENDED = ('done', 'completed', 'failed', 'error', 'cancelled')
MIGRATION_FAILED = ('failed', 'error')

Service = collections.namedtuple('Service', (
    'id', 'host', 'zone', 'disabled', 'disabled_reason', 'forced_down',
    'up', 'updated_at'))

Server = collections.namedtuple('Server', (
    'id', 'status', 'task_state', 'metadata', 'extra_specs', 'host',
    'fault'))

Aggregate = collections.namedtuple('Aggregate', ('id', 'name', 'hosts'))

Migration = collections.namedtuple('Migration', (
    'id', 'instance_uuid', 'status', 'dest_compute', 'created_at'))


class Unreachable(Exception):
    """The compute API did not answer (refused, timed out, 5xx)."""


class Refused(Exception):
    """The compute API answered a request with a client error.

    ``status``: its HTTP status; the message is the fault's.
    """

    def __init__(self, status, message):
        super().__init__(message)
        self.status = status


class ComputeAPI:
    """A keystoneauth1 adapter to the compute service, and what it serves."""

    def __init__(self, adapter, evacuate_version=EVACUATE_ACTIVE_VERSION):
        self._adapter = adapter
        self._evacuate_version = evacuate_version
        # None until asked: whether the target has these.
        self._has_entity_tags = None
        self._has_mark_shutdown = None

    @property
    def endpoint(self):
        return self._adapter.get_endpoint()

    def version_range(self):
        """(min, max) microversions the endpoint serves, as tuples."""
        document = self._json(self._get('/', version=None))
        version = document.get('version') or {}
        return (_parse(version.get('min_version') or '2.1'),
                _parse(version.get('version') or '2.1'))

    def check_versions(self):
        """Refuse an endpoint older than what the monitor speaks.

        An endpoint older than 2.94 evacuates at its newest microversion:
        every one up to 2.94 brings an active server back active. A
        stopped end (2.95) is refused where it is not served.
        """
        lowest, highest = self.version_range()
        wanted = _parse(self._evacuate_version)
        if (wanted == _parse(EVACUATE_ACTIVE_VERSION) and
                MIN_VERSION <= highest < wanted):
            self._evacuate_version = _shown(highest)
            wanted = highest
        for needed in (MIN_VERSION, wanted):
            if not lowest <= needed <= highest:
                raise Refused(406, 'the compute API at %s serves '
                              'microversions %s to %s; the monitor needs '
                              '%s' % (self.endpoint, _shown(lowest),
                                      _shown(highest), _shown(needed)))

    # ------------------------------------------------------------ services

    def compute_services(self, host=None):
        """The nova-compute :class:`Service` records, of ``host`` if given."""
        params = {'binary': 'nova-compute'}
        if host is not None:
            params['host'] = host
        return [_service(item) for item in self._json(
            self._get('/os-services', params=params))['services']]

    def service(self, service):
        """``service`` read again now: (its record, its entity tag or None).

        The entity tag is asked for where the target serves one; elsewhere
        the record is read again from the listing. None for the record
        when the service is gone.
        """
        if self._has_entity_tags is not False:
            response = self._get('/os-services/%s' % service.id,
                                 raise_for=())
            if response.status_code == 200:
                self._has_entity_tags = True
                return (_service(self._json(response)['service']),
                        response.headers.get('ETag'))
            if self._has_entity_tags or response.status_code not in (
                    404, 405):
                return self._raise_for(response, 'GET', service.id)
            self._has_entity_tags = False
        found = [item for item in self.compute_services(host=service.host)
                 if item.id == service.id]
        return (found[0] if found else None), None

    def update_service(self, service_id, changes, entity_tag=None):
        """PUT ``changes`` on the service; Refused(412) if it changed."""
        headers = {'If-Match': entity_tag} if entity_tag else None
        response = self._request(
            'PUT', '/os-services/%s' % service_id, json=changes,
            headers=headers)
        return _service(self._json(response)['service'])

    # ---------------------------------------------------------- aggregates

    def aggregates(self):
        """Every host aggregate: :class:`Aggregate` records."""
        return [_aggregate(item) for item in self._json(
            self._get('/os-aggregates'))['aggregates']]

    def add_to_aggregate(self, aggregate_id, host):
        """Add ``host`` to the aggregate; Refused as the target says."""
        self._request('POST', '/os-aggregates/%s/action' % aggregate_id,
                      json={'add_host': {'host': host}})

    # ------------------------------------------------------------- servers

    def servers_on(self, host):
        """Every server whose host is ``host``, in every project.

        Each server's host is checked here too: a user whose role lacks
        Nova's os_compute_api:servers:allow_all_filters has the ``host``
        filter ignored, and gets servers of every host.
        """
        return [server for server in self._servers_filtered_by(host)
                if server.host == host]

    def _servers_filtered_by(self, host):
        servers = []
        params = {'all_tenants': '1', 'host': host, 'sort_key': 'created_at',
                  'sort_dir': 'asc'}
        while True:
            page = self._json(self._get('/servers/detail', params=params))
            servers += [_server(item) for item in page['servers']]
            if not page.get('servers_links') or not page['servers']:
                return servers
            params['marker'] = page['servers'][-1]['id']

    def evacuate(self, server_id, host=None):
        """Ask for ``server_id`` to be evacuated, to ``host`` if given."""
        body = {'evacuate': {'host': host} if host else {}}
        self._request('POST', '/servers/%s/action' % server_id, json=body,
                      version=self._evacuate_version)

    def evacuations_from(self, host):
        """The evacuation :class:`Migration` records away from ``host``."""
        params = {'migration_type': 'evacuation', 'source_compute': host}
        return [_migration(item) for item in self._json(
            self._get('/os-migrations', params=params))['migrations']]

    def mark_shutdown(self, host):
        """Mark every server of ``host`` shut down, where the target can.

        Returns how many were changed, or None when the target has no
        host-wide mark-shutdown (Nova).
        """
        if self._has_mark_shutdown is False:
            return None
        response = self._request(
            'POST', '/os-host-servers/%s/action' % host,
            json={'mark_shutdown': None}, raise_for=())
        if response.status_code in (404, 405) and not self._has_mark_shutdown:
            self._has_mark_shutdown = False
            return None
        self._has_mark_shutdown = True
        if response.status_code != 200:
            return self._raise_for(response, 'POST', host)
        return len(self._json(response).get('servers') or ())

    # ------------------------------------------------------------- the wire

    def _get(self, path, params=None, version=READ_VERSION, raise_for=None):
        return self._request('GET', path, params=params, version=version,
                             raise_for=raise_for)

    def _request(self, method, path, version=READ_VERSION, raise_for=None,
                 **kwargs):
        """The response; Refused or Unreachable as the target answers.

        ``raise_for``: the statuses to raise for; None: any error.
        """
        if version is not None:
            kwargs['microversion'] = version
        try:
            response = self._adapter.request(path, method, raise_exc=False,
                                             **kwargs)
        except ks_exc.ConnectionError as exc:
            raise Unreachable('%s %s: %s' % (method, path, exc))
        except ks_exc.ClientException as exc:
            # keystoneauth1 asks Keystone first: a refused token, an
            # endpoint missing from the catalog.
            raise Refused(401, '%s %s: %s' % (method, path, exc))
        failed = response.status_code >= 400
        if failed and (raise_for is None or response.status_code in
                       raise_for):
            self._raise_for(response, method, path)
        return response

    def _raise_for(self, response, method, path):
        message = '%s %s: %d %s' % (method, path, response.status_code,
                                    _fault_message(response))
        if response.status_code >= 500:
            raise Unreachable(message)
        raise Refused(response.status_code, message)

    @staticmethod
    def _json(response):
        try:
            return response.json()
        except ValueError:
            raise Unreachable('%s answered %d without JSON' % (
                response.url, response.status_code))


def from_conf(conf, evacuate_version):
    """The :class:`ComputeAPI` that ``[compute_api]`` describes."""
    group = compute_api_conf.GROUP
    if conf[group].cloud:
        return ComputeAPI(_cloud_adapter(conf), evacuate_version)
    auth = ks_loading.load_auth_from_conf_options(conf, group)
    session = ks_loading.load_session_from_conf_options(conf, group,
                                                        auth=auth)
    adapter = ks_loading.load_adapter_from_conf_options(
        conf, group, session=session, auth=auth)
    return ComputeAPI(adapter, evacuate_version)


class CloudUnusable(Exception):
    """[compute_api] cloud names a cloud that cannot be used."""


def _cloud_adapter(conf):
    """An adapter to the compute service of a clouds.yaml cloud."""
    from keystoneauth1 import adapter as ks_adapter
    try:
        from openstack import config as os_config
        from openstack import exceptions as os_exc
    except ImportError:
        raise CloudUnusable('[compute_api] cloud needs openstacksdk, which '
                            'reads clouds.yaml: pip install openstacksdk')
    try:
        region = os_config.OpenStackConfig().get_one(
            cloud=conf.compute_api.cloud)
    except os_exc.ConfigException as exc:
        raise CloudUnusable('[compute_api] cloud %r: %s' % (
            conf.compute_api.cloud, exc))
    return ks_adapter.Adapter(
        region.get_session(), service_type='compute',
        interface=region.get_interface('compute'),
        region_name=region.get_region_name('compute'),
        endpoint_override=region.get_endpoint('compute'))


def _parse(text):
    major, _, minor = text.partition('.')
    return int(major), int(minor or 0)


def _shown(version):
    return '%d.%d' % version


def _fault_message(response):
    """The message of Nova's fault body, else the body's start."""
    try:
        document = response.json()
    except ValueError:
        return response.text[:200]
    if isinstance(document, dict) and len(document) == 1:
        fault = next(iter(document.values()))
        if isinstance(fault, dict) and 'message' in fault:
            return fault['message']
    return response.text[:200]


def _service(item):
    return Service(
        id=item['id'], host=item['host'], zone=item.get('zone'),
        disabled=item.get('status') == 'disabled',
        disabled_reason=item.get('disabled_reason'),
        forced_down=bool(item.get('forced_down')),
        up=item.get('state') == 'up', updated_at=item.get('updated_at'))


def _server(item):
    flavor = item.get('flavor') or {}
    return Server(
        id=item['id'], status=item.get('status'),
        task_state=item.get('OS-EXT-STS:task_state'),
        metadata=item.get('metadata') or {},
        extra_specs=flavor.get('extra_specs') or {},
        host=item.get('OS-EXT-SRV-ATTR:host'),
        fault=(item.get('fault') or {}).get('message'))


def _migration(item):
    return Migration(
        id=item.get('id'), instance_uuid=item.get('instance_uuid'),
        status=item.get('status'), dest_compute=item.get('dest_compute'),
        created_at=item.get('created_at'))


def _aggregate(item):
    return Aggregate(id=item['id'], name=item.get('name'),
                     hosts=tuple(item.get('hosts') or ()))
