"""The API reference's request and response samples, replayed.

Each file in doc/api_samples/ holds one request and the response the real
app gave to it, on the hosts of ``api_world.COMPUTE_HOSTS`` (a fresh
database per sample). The test sends the request again and compares the
answer with the file: same status, same version header, and the same JSON
structure, keys and values, except that a UUID or a timestamp in the
sample stands for any UUID or timestamp. So the documentation cannot
drift from the code.

``{NAME}`` in a sample's path is the id the world names NAME (e.g.
``{HOST1_NODE_UUID}``). To rewrite the samples after an intended
change, run this module with NOVA_FORCEDOWN_WRITE_SAMPLES=1 (or the start
of the names to rewrite, e.g. ``os-aggregates/``) and review the diff.
"""

import json
import os
import re

from oslo_serialization import jsonutils
import testtools
import webob

from nova_forcedown.api import deploy
from tests.fixtures import api_app
from tests.fixtures import api_world
from tests.fixtures import configuration

SAMPLES_DIR = os.path.abspath(os.path.join(
    os.path.dirname(__file__), '..', '..', '..', 'doc', 'api_samples'))
BASE_URL = 'http://openstack.example.com'
TOKEN = 'admin:' + api_world.ADMIN_PROJECT

_UUID = '[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}'
_TIMESTAMP = (r'\d{4}-\d{2}-\d{2}[T ]\d{2}:\d{2}:\d{2}(\.\d+)?'
              r'(Z|[+-]\d{2}:\d{2})?')
_WILDCARDS = re.compile('(%s|%s)' % (_UUID, _TIMESTAMP))

# (sample file, method, path, microversion, body): the source of the
# samples when they are (re)written.
REQUESTS = [
    ('os-services/services-list-v2.1', 'GET', '/os-services', '2.1', None),
    ('os-services/services-list-v2.11', 'GET', '/os-services', '2.11',
     None),
    ('os-services/services-list-v2.53', 'GET', '/os-services', '2.53',
     None),
    ('os-services/service-enable-v2.1', 'PUT', '/os-services/enable', '2.1',
     {'host': 'host2', 'binary': 'nova-compute'}),
    ('os-services/service-disable-v2.1', 'PUT', '/os-services/disable',
     '2.1', {'host': 'host1', 'binary': 'nova-compute'}),
    ('os-services/service-disable-log-reason-v2.1', 'PUT',
     '/os-services/disable-log-reason', '2.1',
     {'host': 'host1', 'binary': 'nova-compute',
      'disabled_reason': 'fenced by the fault monitor'}),
    ('os-services/service-force-down-v2.11', 'PUT',
     '/os-services/force-down', '2.11',
     {'host': 'host1', 'binary': 'nova-compute', 'forced_down': True}),
    ('os-services/service-update-forced-down-v2.53', 'PUT',
     '/os-services/{HOST1_SERVICE_UUID}', '2.53', {'forced_down': True}),
    ('os-services/service-update-disable-v2.53', 'PUT',
     '/os-services/{HOST1_SERVICE_UUID}', '2.53',
     {'status': 'disabled', 'disabled_reason': 'maintenance'}),
    ('os-services/service-delete-v2.53', 'DELETE',
     '/os-services/{HOST4_SERVICE_UUID}', '2.53', None),
    ('os-service-history/service-history-list', 'GET',
     '/os-services/{HOST1_SERVICE_UUID}/history', '2.1', None),
    ('os-service-history/service-history-list-paged', 'GET',
     '/os-services/{HOST1_SERVICE_UUID}/history?limit=1', '2.100', None),
    ('os-hypervisors/hypervisors-list-v2.1', 'GET', '/os-hypervisors',
     '2.1', None),
    ('os-hypervisors/hypervisors-detail-v2.1', 'GET',
     '/os-hypervisors/detail', '2.1', None),
    ('os-hypervisors/hypervisors-show-v2.1', 'GET',
     '/os-hypervisors/{HOST1_NODE_ID}', '2.1', None),
    ('os-hypervisors/hypervisors-show-v2.28', 'GET',
     '/os-hypervisors/{HOST1_NODE_ID}', '2.28', None),
    ('os-hypervisors/hypervisors-list-paged-v2.33', 'GET',
     '/os-hypervisors?limit=2', '2.33', None),
    ('os-hypervisors/hypervisors-list-v2.53', 'GET', '/os-hypervisors',
     '2.53', None),
    ('os-hypervisors/hypervisors-detail-with-servers-v2.53', 'GET',
     '/os-hypervisors/detail?hypervisor_hostname_pattern=host1'
     '&with_servers=true', '2.53', None),
    ('os-hypervisors/hypervisors-show-v2.53', 'GET',
     '/os-hypervisors/{HOST3_NODE_UUID}', '2.53', None),
    ('os-hypervisors/hypervisors-list-v2.88', 'GET', '/os-hypervisors',
     '2.88', None),
    ('os-hypervisors/hypervisors-show-v2.88', 'GET',
     '/os-hypervisors/{HOST1_NODE_UUID}', '2.88', None),
    ('os-hypervisors/hypervisors-statistics-v2.1', 'GET',
     '/os-hypervisors/statistics', '2.1', None),
    ('os-hypervisors/hypervisors-uptime-v2.1', 'GET',
     '/os-hypervisors/{HOST1_NODE_ID}/uptime', '2.1', None),
    ('os-hypervisors/hypervisors-search-v2.1', 'GET',
     '/os-hypervisors/host/search', '2.1', None),
    ('os-hypervisors/hypervisors-servers-v2.1', 'GET',
     '/os-hypervisors/host1/servers', '2.1', None),
    ('os-aggregates/aggregates-list-v2.1', 'GET', '/os-aggregates', '2.1',
     None),
    ('os-aggregates/aggregates-list-v2.41', 'GET', '/os-aggregates',
     '2.41', None),
    ('os-aggregates/aggregate-create-v2.1', 'POST', '/os-aggregates',
     '2.1', {'aggregate': {'name': 'agg2', 'availability_zone': 'az2'}}),
    ('os-aggregates/aggregate-create-v2.41', 'POST', '/os-aggregates',
     '2.41', {'aggregate': {'name': 'agg2', 'availability_zone': 'az2'}}),
    ('os-aggregates/aggregate-show-v2.41', 'GET', '/os-aggregates/{AGG1_ID}',
     '2.41', None),
    ('os-aggregates/aggregate-update-v2.41', 'PUT',
     '/os-aggregates/{AGG1_ID}', '2.41',
     {'aggregate': {'name': 'agg1-renamed'}}),
    ('os-aggregates/aggregate-add-host-v2.41', 'POST',
     '/os-aggregates/{AGG1_ID}/action', '2.41',
     {'add_host': {'host': 'host4'}}),
    ('os-aggregates/aggregate-remove-host-v2.41', 'POST',
     '/os-aggregates/{AGG1_ID}/action', '2.41',
     {'remove_host': {'host': 'host2'}}),
    ('os-aggregates/aggregate-set-metadata-v2.41', 'POST',
     '/os-aggregates/{AGG1_ID}/action', '2.41',
     {'set_metadata': {'metadata': {'ssd': None, 'rack': 'r3'}}}),
    ('os-aggregates/aggregate-delete-v2.1', 'DELETE',
     '/os-aggregates/{RACK3_ID}', '2.1', None),
    ('os-aggregates/aggregate-images-v2.81', 'POST',
     '/os-aggregates/{AGG1_ID}/images', '2.81',
     {'cache': [{'id': '70a599e0-31e7-49b7-b260-868f441e862b'}]}),
    ('os-availability-zone/availability-zone-list-v2.1', 'GET',
     '/os-availability-zone', '2.1', None),
    ('os-availability-zone/availability-zone-detail-v2.1', 'GET',
     '/os-availability-zone/detail', '2.1', None),
    ('servers/servers-list-v2.1', 'GET', '/servers?all_tenants=1&limit=3',
     '2.1', None),
    ('servers/servers-detail-v2.16', 'GET',
     '/servers/detail?all_tenants=1&host=host3', '2.16', None),
    ('servers/servers-detail-v2.1', 'GET', '/servers/detail?host=host4',
     '2.1', None),
    ('servers/servers-detail-v2.47', 'GET',
     '/servers/detail?all_tenants=1&host=host1', '2.47', None),
    ('servers/servers-detail-v2.100', 'GET', '/servers/detail?all_tenants=1',
     '2.100', None),
    ('servers/servers-list-sorted-v2.100', 'GET',
     '/servers?all_tenants=1&sort_key=host&sort_key=display_name'
     '&sort_dir=asc&sort_dir=desc&limit=4', '2.100', None),
    ('servers/server-show-v2.47', 'GET', '/servers/{WEB1_UUID}', '2.47',
     None),
    ('servers/server-show-v2.98', 'GET', '/servers/{WEB1_UUID}', '2.98',
     None),
    ('servers/server-show-v2.100', 'GET', '/servers/{DB2_UUID}', '2.100',
     None),
    ('servers/server-action-lock-v2.73', 'POST', '/servers/{WEB1_UUID}/action',
     '2.73', {'lock': {'locked_reason': 'Masakari is recovering host1'}}),
    ('servers/server-action-unlock-v2.1', 'POST',
     '/servers/{DB2_UUID}/action', '2.1', {'unlock': None}),
    ('servers/server-action-reset-state-v2.1', 'POST',
     '/servers/{DB1_UUID}/action', '2.1',
     {'os-resetState': {'state': 'error'}}),
    ('servers/server-action-stop-v2.1', 'POST',
     '/servers/{WEB1_UUID}/action', '2.1', {'os-stop': None}),
    ('servers/server-action-start-v2.1', 'POST',
     '/servers/{WEB2_UUID}/action', '2.1', {'os-start': None}),
    ('servers/server-action-evacuate-v2.53', 'POST',
     '/servers/{DB1_UUID}/action', '2.53', {'evacuate': {}}),
    ('servers/server-action-evacuate-v2.1', 'POST',
     '/servers/{DB1_UUID}/action', '2.1',
     {'evacuate': {'host': 'host1', 'onSharedStorage': True}}),
    ('servers/server-metadata-list-v2.1', 'GET',
     '/servers/{WEB1_UUID}/metadata', '2.1', None),
    ('servers/server-metadata-show-v2.1', 'GET',
     '/servers/{WEB1_UUID}/metadata/HA_Enabled', '2.1', None),
    ('servers/server-metadata-create-v2.1', 'POST',
     '/servers/{WEB1_UUID}/metadata', '2.1',
     {'metadata': {'rack': 'r1'}}),
    ('servers/server-metadata-update-all-v2.1', 'PUT',
     '/servers/{WEB1_UUID}/metadata', '2.1',
     {'metadata': {'HA_Enabled': 'True', 'owner': 'ops'}}),
    ('servers/server-metadata-update-v2.1', 'PUT',
     '/servers/{WEB2_UUID}/metadata/HA_Enabled', '2.1',
     {'meta': {'HA_Enabled': 'True'}}),
    ('servers/server-metadata-delete-v2.1', 'DELETE',
     '/servers/{WEB1_UUID}/metadata/HA_Enabled', '2.1', None),
    ('os-migrations/server-migrations-list-v2.23', 'GET',
     '/servers/{DB1_UUID}/migrations', '2.23', None),
    ('os-migrations/migrations-list-v2.80', 'GET', '/os-migrations', '2.80',
     None),
    ('os-migrations/migrations-list-v2.1', 'GET',
     '/os-migrations?migration_type=evacuation', '2.1', None),
    ('os-host-servers/host-servers-mark-shutdown-v2.1', 'POST',
     '/os-host-servers/host3/action', '2.1', {'mark_shutdown': None}),
    ('os-host-servers/host-servers-reset-state-v2.1', 'POST',
     '/os-host-servers/host4/action', '2.1',
     {'os-resetState': {'state': 'active'}}),
    ('os-instance-actions/instance-actions-list-v2.58', 'GET',
     '/servers/{WEB2_UUID}/os-instance-actions?limit=1', '2.58', None),
    ('os-instance-actions/instance-action-show-v2.84', 'GET',
     '/servers/{WEB2_UUID}/os-instance-actions/req-web2-start', '2.84',
     None),
    ('flavors/flavors-list-v2.1', 'GET', '/flavors?limit=2', '2.1', None),
    ('flavors/flavor-access-list-v2.1', 'GET',
     '/flavors/shared/os-flavor-access', '2.1', None),
    ('flavors/flavor-access-add-tenant-v2.7', 'POST', '/flavors/shared/action',
     '2.7', {'addTenantAccess': {'tenant': api_world.OTHER_PROJECT}}),
    ('flavors/flavor-access-remove-tenant-v2.7', 'POST',
     '/flavors/shared/action', '2.7',
     {'removeTenantAccess': {'tenant': api_world.USER_PROJECT}}),
    ('flavors/flavors-list-v2.55', 'GET', '/flavors?minRam=8192', '2.55',
     None),
    ('flavors/flavors-detail-v2.1', 'GET', '/flavors/detail?minRam=8192',
     '2.1', None),
    ('flavors/flavors-detail-v2.61', 'GET',
     '/flavors/detail?is_public=None&minRam=8192', '2.61', None),
    ('flavors/flavors-detail-v2.102', 'GET',
     '/flavors/detail?name=big', '2.102', None),
    ('flavors/flavor-show-v2.1', 'GET', '/flavors/10', '2.1', None),
    ('flavors/flavor-show-v2.75', 'GET', '/flavors/2', '2.75', None),
    ('flavors/flavor-create-v2.1', 'POST', '/flavors', '2.1',
     {'flavor': {'name': 'gpu.large', 'id': 'gpu1', 'ram': 16384,
                 'vcpus': 8, 'disk': 80, 'OS-FLV-EXT-DATA:ephemeral': 20,
                 'swap': 2048, 'rxtx_factor': 1.0,
                 'os-flavor-access:is_public': False}}),
    ('flavors/flavor-create-v2.61', 'POST', '/flavors', '2.61',
     {'flavor': {'name': 'gpu.large', 'ram': 16384, 'vcpus': 8,
                 'disk': 80, 'description': 'Eight vCPUs and a GPU'}}),
    ('flavors/flavor-update-v2.55', 'PUT', '/flavors/10', '2.55',
     {'flavor': {'description': 'For the biggest jobs'}}),
    ('flavors/flavor-delete-v2.1', 'DELETE', '/flavors/10', '2.1', None),
    ('flavors/extra-specs-list-v2.1', 'GET', '/flavors/2/os-extra_specs',
     '2.1', None),
    ('flavors/extra-specs-show-v2.1', 'GET',
     '/flavors/2/os-extra_specs/hw:cpu_policy', '2.1', None),
    ('flavors/extra-specs-create-v2.1', 'POST', '/flavors/2/os-extra_specs',
     '2.1', {'extra_specs': {'evacuable': 'false',
                             'hw:mem_page_size': 'large'}}),
    ('flavors/extra-specs-create-v2.86', 'POST',
     '/flavors/2/os-extra_specs', '2.86',
     {'extra_specs': {'hw:cpu_policy': 'dedicated', 'hw:numa_nodes': 2,
                      'evacuable': 'true'}}),
    ('flavors/extra-specs-create-invalid-v2.86', 'POST',
     '/flavors/2/os-extra_specs', '2.86',
     {'extra_specs': {'hw:cpu_policy': 'bogus'}}),
    ('flavors/extra-specs-update-v2.1', 'PUT',
     '/flavors/2/os-extra_specs/evacuable', '2.1', {'evacuable': 'false'}),
    ('flavors/extra-specs-delete-v2.1', 'DELETE',
     '/flavors/2/os-extra_specs/evacuable', '2.1', None),
]

# Samples of these directories also get these parts of the world.
EXTRA_PARTS = {
    'os-aggregates': [api_world.AGGREGATES],
    'servers': [api_world.SERVERS],
    'os-migrations': [api_world.SERVERS, api_world.MIGRATIONS],
    'os-host-servers': [api_world.SERVERS],
    'os-instance-actions': [api_world.SERVERS, api_world.INSTANCE_ACTIONS],
    'flavors': [api_world.FLAVORS],
    'os-service-history': [api_world.SERVICE_HISTORY],
}


def sample_names():
    names = []
    for directory, _, files in os.walk(SAMPLES_DIR):
        for name in files:
            if name.endswith('.json'):
                path = os.path.join(directory, name)
                names.append(os.path.relpath(path, SAMPLES_DIR)[:-5])
    return sorted(names)


def matches(sample, actual, where='$'):
    """None when ``actual`` fits ``sample``, else where and why not."""
    if isinstance(sample, dict):
        if not isinstance(actual, dict) or set(sample) != set(actual):
            return '%s: keys %s, expected %s' % (
                where, sorted(actual) if isinstance(actual, dict) else actual,
                sorted(sample))
        for key in sample:
            problem = matches(sample[key], actual[key], '%s.%s' % (where,
                                                                   key))
            if problem:
                return problem
        return None
    if isinstance(sample, list):
        if not isinstance(actual, list) or len(sample) != len(actual):
            return '%s: %r, expected %d items' % (where, actual, len(sample))
        for index, (want, got) in enumerate(zip(sample, actual)):
            problem = matches(want, got, '%s[%d]' % (where, index))
            if problem:
                return problem
        return None
    if isinstance(sample, str) and isinstance(actual, str):
        pattern = ''.join(
            part if index % 2 else re.escape(part)
            for index, part in enumerate(_wildcard_split(sample)))
        if re.fullmatch(pattern, actual):
            return None
    elif sample == actual and type(sample) is type(actual):
        return None
    return '%s: %r, expected %r' % (where, actual, sample)


def _wildcard_split(text):
    """Literal text and wildcard patterns, alternately."""
    parts, position = [], 0
    for match in _WILDCARDS.finditer(text):
        parts.extend([text[position:match.start()],
                      _UUID if re.fullmatch(_UUID, match.group())
                      else _TIMESTAMP])
        position = match.end()
    parts.append(text[position:])
    return parts


class TestAPISamples(testtools.TestCase):

    def setUp(self):
        super().setUp()
        self.world = self.useFixture(api_app.ApiWorld())
        self.app = deploy.load_app(configuration.api_conf())
        self.world.add(api_world.COMPUTE_HOSTS)

    @staticmethod
    def add_parts_for(world, name):
        """Add the extra parts of sample ``name``'s directory."""
        for part in EXTRA_PARTS.get(name.split('/')[0], ()):
            world.add(part)

    @staticmethod
    def call(app, ids, request):
        path = '/v2.1' + request['path'].format(**ids)
        req = webob.Request.blank(path, base_url=BASE_URL,
                                  method=request['method'])
        req.headers['X-Auth-Token'] = TOKEN
        req.headers['OpenStack-API-Version'] = 'compute ' + request['version']
        if request.get('body') is not None:
            req.content_type = 'application/json'
            req.body = jsonutils.dump_as_bytes(request['body'])
        response = req.get_response(app)
        return {'status': response.status_int,
                'headers': {'OpenStack-API-Version':
                            response.headers.get('OpenStack-API-Version')},
                'body': response.json if response.body else None}

    def check_sample(self, name):
        self.add_parts_for(self.world, name)
        with open(os.path.join(SAMPLES_DIR, name + '.json')) as sample_file:
            sample = json.load(sample_file)
        actual = self.call(self.app, self.world.ids, sample['request'])
        problem = matches(sample['response'], actual)
        if problem:
            self.fail('%s.json no longer matches the API: %s' % (name,
                                                                 problem))

    def test_every_request_has_a_sample(self):
        self.assertEqual(sorted(entry[0] for entry in REQUESTS),
                         sample_names())


def _sample_test(name):
    def test(self):
        self.check_sample(name)
    test.__name__ = 'test_' + re.sub(r'\W', '_', name)
    return test


for _name in sample_names():
    _test = _sample_test(_name)
    setattr(TestAPISamples, _test.__name__, _test)


def write_samples(prefix=''):
    """Rewrite each sample of REQUESTS named ``prefix...``, on fresh rows.

    The default prefix rewrites them all.
    """
    for name, method, path, version, body in REQUESTS:
        if not name.startswith(prefix):
            continue
        request = {'method': method, 'path': path, 'version': version}
        if body is not None:
            request['body'] = body
        world = api_app.ApiWorld()
        world.setUp()
        try:
            app = deploy.load_app(configuration.api_conf())
            world.add(api_world.COMPUTE_HOSTS)
            TestAPISamples.add_parts_for(world, name)
            response = TestAPISamples.call(app, world.ids, request)
        finally:
            world.cleanUp()
        target = os.path.join(SAMPLES_DIR, name + '.json')
        os.makedirs(os.path.dirname(target), exist_ok=True)
        with open(target, 'w') as sample_file:
            json.dump({'request': request, 'response': response},
                      sample_file, indent=4, sort_keys=True)
            sample_file.write('\n')


if __name__ == '__main__' and os.environ.get(
        'NOVA_FORCEDOWN_WRITE_SAMPLES'):
    # NOVA_FORCEDOWN_WRITE_SAMPLES=os-aggregates/ rewrites only those.
    write_samples('' if os.environ['NOVA_FORCEDOWN_WRITE_SAMPLES'] == '1'
                  else os.environ['NOVA_FORCEDOWN_WRITE_SAMPLES'])
