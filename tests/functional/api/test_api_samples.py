"""The API reference's request and response samples, replayed.

doc/api_samples/ is laid out as Nova's API reference lays out its own: a
directory per resource, a ``v2.N`` directory below it for a sample at a
microversion other than 2.1, and for each sample ``NAME-req.json`` (the
request body, when there is one) and ``NAME-resp.json`` (the response
body, when there is one). ``REQUESTS`` below gives each sample's method,
path and status; the response is the one the real app gave, on the hosts
of ``api_world.COMPUTE_HOSTS`` (a fresh database per sample).

The test sends each request again and compares the answer with the files:
same status, the microversion it asked for, and the same JSON structure,
keys and values, except that a UUID or a timestamp in a sample stands for
any UUID or timestamp, and the ``reservation_id`` a create answers for any
reservation id (Nova's ``r-`` and 8 random letters or digits). So the
documentation cannot drift from the code.

``{NAME}`` in a path is the id the world names NAME (e.g.
``{HOST1_NODE_UUID}``). To rewrite the response files after an intended
change, run this module with NOVA_FORCEDOWN_WRITE_SAMPLES=1 (or the start
of the names to rewrite, e.g. ``os-aggregates/``) and review the diff; a
request file is written by hand.
"""

import collections
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
# Where a sample holds a value made at random for each request, and its
# pattern: the reservation id of POST /servers with return_reservation_id.
_RANDOM_AT = {'$.reservation_id': 'r-[0-9a-z]{8}'}


class Sample(collections.namedtuple('Sample', 'name method path status')):

    @property
    def version(self):
        """The microversion its ``v2.N`` directory names, else 2.1."""
        parts = self.name.split('/')
        return parts[1][1:] if len(parts) == 3 else '2.1'

    def body(self, kind):
        """The JSON of its ``-req`` or ``-resp`` file, None without one."""
        path = os.path.join(SAMPLES_DIR, '%s-%s.json' % (self.name, kind))
        if not os.path.exists(path):
            return None
        with open(path) as sample_file:
            return json.load(sample_file)


REQUESTS = [
    Sample('os-services/services-list', 'GET', '/os-services', 200),
    Sample('os-services/v2.11/services-list', 'GET', '/os-services', 200),
    Sample('os-services/v2.53/services-list', 'GET', '/os-services', 200),
    Sample('os-services/service-enable', 'PUT', '/os-services/enable', 200),
    Sample('os-services/service-disable', 'PUT', '/os-services/disable', 200),
    Sample('os-services/service-disable-log-reason', 'PUT',
           '/os-services/disable-log-reason', 200),
    Sample('os-services/v2.11/service-force-down', 'PUT',
           '/os-services/force-down', 200),
    Sample('os-services/v2.53/service-show', 'GET',
           '/os-services/{HOST1_SERVICE_UUID}', 200),
    Sample('os-services/v2.53/service-update-forced-down', 'PUT',
           '/os-services/{HOST1_SERVICE_UUID}', 200),
    Sample('os-services/v2.53/service-update-disable', 'PUT',
           '/os-services/{HOST1_SERVICE_UUID}', 200),
    Sample('os-services/v2.53/service-delete', 'DELETE',
           '/os-services/{HOST4_SERVICE_UUID}', 204),
    Sample('os-service-history/service-history-list', 'GET',
           '/os-services/{HOST1_SERVICE_UUID}/history', 200),
    Sample('os-service-history/v2.100/service-history-list-paged', 'GET',
           '/os-services/{HOST1_SERVICE_UUID}/history?limit=1', 200),
    Sample('os-hypervisors/hypervisors-list', 'GET', '/os-hypervisors', 200),
    Sample('os-hypervisors/hypervisors-detail', 'GET',
           '/os-hypervisors/detail', 200),
    Sample('os-hypervisors/hypervisors-show', 'GET',
           '/os-hypervisors/{HOST1_NODE_ID}', 200),
    Sample('os-hypervisors/v2.28/hypervisors-show', 'GET',
           '/os-hypervisors/{HOST1_NODE_ID}', 200),
    Sample('os-hypervisors/v2.33/hypervisors-list-paged', 'GET',
           '/os-hypervisors?limit=2', 200),
    Sample('os-hypervisors/v2.53/hypervisors-list', 'GET',
           '/os-hypervisors', 200),
    Sample('os-hypervisors/v2.53/hypervisors-detail-with-servers', 'GET',
           '/os-hypervisors/detail?hypervisor_hostname_pattern=host1'
           '&with_servers=true', 200),
    Sample('os-hypervisors/v2.53/hypervisors-show', 'GET',
           '/os-hypervisors/{HOST3_NODE_UUID}', 200),
    Sample('os-hypervisors/v2.88/hypervisors-list', 'GET',
           '/os-hypervisors', 200),
    Sample('os-hypervisors/v2.88/hypervisors-show', 'GET',
           '/os-hypervisors/{HOST1_NODE_UUID}', 200),
    Sample('os-hypervisors/hypervisors-statistics', 'GET',
           '/os-hypervisors/statistics', 200),
    Sample('os-hypervisors/hypervisors-uptime', 'GET',
           '/os-hypervisors/{HOST1_NODE_ID}/uptime', 200),
    Sample('os-hypervisors/hypervisors-search', 'GET',
           '/os-hypervisors/host/search', 200),
    Sample('os-hypervisors/hypervisors-servers', 'GET',
           '/os-hypervisors/host1/servers', 200),
    Sample('os-aggregates/aggregates-list', 'GET', '/os-aggregates', 200),
    Sample('os-aggregates/v2.41/aggregates-list', 'GET',
           '/os-aggregates', 200),
    Sample('os-aggregates/aggregate-create', 'POST', '/os-aggregates', 200),
    Sample('os-aggregates/v2.41/aggregate-create', 'POST',
           '/os-aggregates', 200),
    Sample('os-aggregates/v2.41/aggregate-show', 'GET',
           '/os-aggregates/{AGG1_ID}', 200),
    Sample('os-aggregates/v2.41/aggregate-update', 'PUT',
           '/os-aggregates/{AGG1_ID}', 200),
    Sample('os-aggregates/v2.41/aggregate-add-host', 'POST',
           '/os-aggregates/{AGG1_ID}/action', 200),
    Sample('os-aggregates/v2.41/aggregate-remove-host', 'POST',
           '/os-aggregates/{AGG1_ID}/action', 200),
    Sample('os-aggregates/v2.41/aggregate-set-metadata', 'POST',
           '/os-aggregates/{AGG1_ID}/action', 200),
    Sample('os-aggregates/aggregate-delete', 'DELETE',
           '/os-aggregates/{RACK3_ID}', 200),
    Sample('os-aggregates/v2.81/aggregate-images', 'POST',
           '/os-aggregates/{AGG1_ID}/images', 400),
    Sample('os-availability-zone/availability-zone-list', 'GET',
           '/os-availability-zone', 200),
    Sample('os-availability-zone/availability-zone-detail', 'GET',
           '/os-availability-zone/detail', 200),
    Sample('servers/servers-list', 'GET',
           '/servers?all_tenants=1&limit=3', 200),
    Sample('servers/v2.16/servers-detail', 'GET',
           '/servers/detail?all_tenants=1&host=host3', 200),
    Sample('servers/servers-detail', 'GET', '/servers/detail?host=host4', 200),
    Sample('servers/v2.47/servers-detail', 'GET',
           '/servers/detail?all_tenants=1&host=host1', 200),
    Sample('servers/v2.100/servers-detail', 'GET',
           '/servers/detail?all_tenants=1', 200),
    Sample('servers/v2.100/servers-list-sorted', 'GET',
           '/servers?all_tenants=1&sort_key=host&sort_key=display_name'
           '&sort_dir=asc&sort_dir=desc&limit=4', 200),
    Sample('servers/v2.47/server-show', 'GET', '/servers/{WEB1_UUID}', 200),
    Sample('servers/v2.98/server-show', 'GET', '/servers/{WEB1_UUID}', 200),
    Sample('servers/v2.100/server-show', 'GET', '/servers/{DB2_UUID}', 200),
    Sample('servers/v2.73/server-action-lock', 'POST',
           '/servers/{WEB1_UUID}/action', 202),
    Sample('servers/server-action-unlock', 'POST',
           '/servers/{DB2_UUID}/action', 202),
    Sample('servers/server-action-reset-state', 'POST',
           '/servers/{DB1_UUID}/action', 202),
    Sample('servers/server-action-stop', 'POST',
           '/servers/{WEB1_UUID}/action', 202),
    Sample('servers/server-action-start', 'POST',
           '/servers/{WEB2_UUID}/action', 202),
    Sample('servers/v2.53/server-action-evacuate', 'POST',
           '/servers/{DB1_UUID}/action', 200),
    Sample('servers/server-action-evacuate', 'POST',
           '/servers/{DB1_UUID}/action', 200),
    Sample('servers/server-create', 'POST', '/servers', 202),
    Sample('servers/v2.74/server-create-reservation', 'POST', '/servers',
           202),
    Sample('servers/server-delete', 'DELETE', '/servers/{WEB1_UUID}', 204),
    Sample('servers/server-action-force-delete', 'POST',
           '/servers/{DB1_UUID}/action', 202),
    Sample('servers/server-metadata-list', 'GET',
           '/servers/{WEB1_UUID}/metadata', 200),
    Sample('servers/server-metadata-show', 'GET',
           '/servers/{WEB1_UUID}/metadata/HA_Enabled', 200),
    Sample('servers/server-metadata-create', 'POST',
           '/servers/{WEB1_UUID}/metadata', 200),
    Sample('servers/server-metadata-update-all', 'PUT',
           '/servers/{WEB1_UUID}/metadata', 200),
    Sample('servers/server-metadata-update', 'PUT',
           '/servers/{WEB2_UUID}/metadata/HA_Enabled', 200),
    Sample('servers/server-metadata-delete', 'DELETE',
           '/servers/{WEB1_UUID}/metadata/HA_Enabled', 204),
    Sample('os-migrations/v2.23/server-migrations-list', 'GET',
           '/servers/{DB1_UUID}/migrations', 200),
    Sample('os-migrations/v2.80/migrations-list', 'GET',
           '/os-migrations', 200),
    Sample('os-migrations/migrations-list', 'GET',
           '/os-migrations?migration_type=evacuation', 200),
    Sample('os-host-servers/host-servers-mark-shutdown', 'POST',
           '/os-host-servers/host3/action', 200),
    Sample('os-host-servers/host-servers-reset-state', 'POST',
           '/os-host-servers/host4/action', 200),
    Sample('os-instance-actions/v2.58/instance-actions-list', 'GET',
           '/servers/{WEB2_UUID}/os-instance-actions?limit=1', 200),
    Sample('os-instance-actions/v2.84/instance-action-show', 'GET',
           '/servers/{WEB2_UUID}/os-instance-actions/req-web2-start', 200),
    Sample('flavors/flavors-list', 'GET', '/flavors?limit=2', 200),
    Sample('flavors/flavor-access-list', 'GET',
           '/flavors/shared/os-flavor-access', 200),
    Sample('flavors/v2.7/flavor-access-add-tenant', 'POST',
           '/flavors/shared/action', 200),
    Sample('flavors/v2.7/flavor-access-remove-tenant', 'POST',
           '/flavors/shared/action', 200),
    Sample('flavors/v2.55/flavors-list', 'GET', '/flavors?minRam=8192', 200),
    Sample('flavors/flavors-detail', 'GET',
           '/flavors/detail?minRam=8192', 200),
    Sample('flavors/v2.61/flavors-detail', 'GET',
           '/flavors/detail?is_public=None&minRam=8192', 200),
    Sample('flavors/v2.102/flavors-detail', 'GET',
           '/flavors/detail?name=big', 200),
    Sample('flavors/flavor-show', 'GET', '/flavors/10', 200),
    Sample('flavors/v2.75/flavor-show', 'GET', '/flavors/2', 200),
    Sample('flavors/flavor-create', 'POST', '/flavors', 200),
    Sample('flavors/v2.61/flavor-create', 'POST', '/flavors', 200),
    Sample('flavors/v2.55/flavor-update', 'PUT', '/flavors/10', 200),
    Sample('flavors/flavor-delete', 'DELETE', '/flavors/10', 202),
    Sample('flavors/extra-specs-list', 'GET',
           '/flavors/2/os-extra_specs', 200),
    Sample('flavors/extra-specs-show', 'GET',
           '/flavors/2/os-extra_specs/hw:cpu_policy', 200),
    Sample('flavors/extra-specs-create', 'POST',
           '/flavors/2/os-extra_specs', 200),
    Sample('flavors/v2.86/extra-specs-create', 'POST',
           '/flavors/2/os-extra_specs', 200),
    Sample('flavors/v2.86/extra-specs-create-invalid', 'POST',
           '/flavors/2/os-extra_specs', 400),
    Sample('flavors/extra-specs-update', 'PUT',
           '/flavors/2/os-extra_specs/evacuable', 200),
    Sample('flavors/extra-specs-delete', 'DELETE',
           '/flavors/2/os-extra_specs/evacuable', 200),
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


def sample_files():
    """Every file under doc/api_samples/, relative to it."""
    return sorted(
        os.path.relpath(os.path.join(directory, name), SAMPLES_DIR)
        for directory, _, names in os.walk(SAMPLES_DIR) for name in names)


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
        if where in _RANDOM_AT:
            random = _RANDOM_AT[where]
            if re.fullmatch(random, sample) and re.fullmatch(random, actual):
                return None
            return '%s: %r, expected %r' % (where, actual, random)
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
    def add_parts_for(world, sample):
        """Add the extra parts of ``sample``'s directory."""
        for part in EXTRA_PARTS.get(sample.name.split('/')[0], ()):
            world.add(part)

    @staticmethod
    def call(app, ids, sample):
        req = webob.Request.blank('/v2.1' + sample.path.format(**ids),
                                  base_url=BASE_URL, method=sample.method)
        req.headers['X-Auth-Token'] = TOKEN
        req.headers['OpenStack-API-Version'] = 'compute ' + sample.version
        body = sample.body('req')
        if body is not None:
            req.content_type = 'application/json'
            req.body = jsonutils.dump_as_bytes(body)
        return req.get_response(app)

    def check_sample(self, sample):
        self.add_parts_for(self.world, sample)
        response = self.call(self.app, self.world.ids, sample)
        self.assertEqual(sample.status, response.status_int,
                         response.text)
        self.assertEqual('compute ' + sample.version,
                         response.headers.get('OpenStack-API-Version'))
        problem = matches(sample.body('resp'),
                          response.json if response.body else None)
        if problem:
            self.fail('%s-resp.json no longer matches the API: %s'
                      % (sample.name, problem))

    def test_every_file_belongs_to_a_sample(self):
        expected = sorted(
            '%s-%s.json' % (sample.name, kind)
            for sample in REQUESTS for kind in ('req', 'resp')
            if sample.body(kind) is not None)
        self.assertEqual(expected, sample_files())

    def test_every_sample_has_a_name_of_its_own(self):
        names = [sample.name for sample in REQUESTS]
        self.assertEqual(len(names), len(set(names)))


def _sample_test(sample):
    def test(self):
        self.check_sample(sample)
    test.__name__ = 'test_' + re.sub(r'\W', '_', sample.name)
    return test


for _sample in REQUESTS:
    _test = _sample_test(_sample)
    setattr(TestAPISamples, _test.__name__, _test)


def write_samples(prefix=''):
    """Rewrite the response file of each sample named ``prefix...``.

    Each on fresh rows; the default prefix rewrites them all.
    """
    for sample in REQUESTS:
        if not sample.name.startswith(prefix):
            continue
        world = api_app.ApiWorld()
        world.setUp()
        try:
            app = deploy.load_app(configuration.api_conf())
            world.add(api_world.COMPUTE_HOSTS)
            TestAPISamples.add_parts_for(world, sample)
            response = TestAPISamples.call(app, world.ids, sample)
        finally:
            world.cleanUp()
        if response.status_int != sample.status:
            raise SystemExit('%s: %s, expected %d' % (
                sample.name, response.status, sample.status))
        target = os.path.join(SAMPLES_DIR, sample.name + '-resp.json')
        if not response.body:
            if os.path.exists(target):
                os.remove(target)
            continue
        os.makedirs(os.path.dirname(target), exist_ok=True)
        with open(target, 'w') as sample_file:
            json.dump(response.json, sample_file, indent=4, sort_keys=True)
            sample_file.write('\n')


if __name__ == '__main__' and os.environ.get(
        'NOVA_FORCEDOWN_WRITE_SAMPLES'):
    # NOVA_FORCEDOWN_WRITE_SAMPLES=os-aggregates/ rewrites only those.
    write_samples('' if os.environ['NOVA_FORCEDOWN_WRITE_SAMPLES'] == '1'
                  else os.environ['NOVA_FORCEDOWN_WRITE_SAMPLES'])
