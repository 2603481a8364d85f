"""What runs follows the layers too, not only what is imported.

tests/unit/test_layers.py says which part may import which. A function
handed down and called back up (a row builder or a listing's renderer
given to a db query, the API's own method given to a servicegroup rule)
passes that test and still bounces through the layers. Here each request
goes through the real app, traced (tests/fixtures/call_trace.py): a call
from a part into one it may not import fails the test, but for the four
the design hands down on purpose.
"""

import fnmatch

from oslotest import base

from nova_forcedown.api import deploy
from tests.fixtures import api_app
from tests.fixtures import api_world
from tests.fixtures import call_trace
from tests.fixtures import configuration

TOKEN = 'admin:' + api_world.ADMIN_PROJECT

# (caller's file, callee's file) patterns of the calls the design makes
# against the layers, each with its reason.
BY_DESIGN = (
    # The writer decorator opens the transaction of the operation of
    # objects/ it wraps.
    ('nova_forcedown/db/engine.py', 'nova_forcedown/objects/*'),
    # The API gives the request context its policy enforcer, as Nova's.
    ('nova_forcedown/context.py', 'nova_forcedown/policy.py'),
    # A host-wide operation judges its host's locked service row with the
    # servicegroup's liveness, which its caller (API or command) hands it.
    ('nova_forcedown/objects/host_operations.py',
     'nova_forcedown/servicegroup/*'),
    # A change of a service on a condition (If-Match) judges the entity tag
    # of the row it locked with the servicegroup's rules (liveness, zone),
    # which its caller (the API) hands it.
    ('nova_forcedown/objects/service.py',
     'nova_forcedown/servicegroup/entity_tag.py'),
)


def _by_design(edge):
    caller, callee = edge.split(' -> ')
    return any(fnmatch.fnmatch(caller, caller_pattern) and
               fnmatch.fnmatch(callee, callee_pattern)
               for caller_pattern, callee_pattern in BY_DESIGN)


class TestCallsFollowLayers(base.BaseTestCase):

    def setUp(self):
        super().setUp()
        self.world = self.useFixture(api_app.ApiWorld(
            api_world.SEEDED, api_world.SERVERS, api_world.ZONES))
        conf = configuration.api_conf()
        self.addCleanup(conf.reset)
        self.app = deploy.load_app(conf)

    def assertFollowsLayers(self, method, path, version, body=None,
                            status=200, warm_up_body=None, headers=None):
        path = path.format(**self.world.ids)
        headers = dict(headers or {}, **{'X-Auth-Token': TOKEN})
        # The first request loads what a server loads once (modules,
        # rules, statements); the second is traced.
        api_app.call_app(self.app, method, path, version,
                         warm_up_body or body, headers)
        with call_trace.Tracer() as tracer:
            resp = api_app.call_app(self.app, method, path, version, body,
                                    headers)
        self.assertEqual(status, resp.status_int, resp.body)
        against = call_trace.against_layers(tracer.calls, tracer.callers)
        self.assertEqual([], [edge for edge in against
                              if not _by_design(edge)])

    def test_services_listing_rendered_as_read(self):
        self.assertFollowsLayers('GET', '/v2.1/os-services', '2.11')

    def test_hypervisors_listing_rendered_as_read(self):
        self.assertFollowsLayers('GET', '/v2.1/os-hypervisors/detail', '2.1')

    def test_hypervisors_page(self):
        self.assertFollowsLayers('GET', '/v2.1/os-hypervisors/detail?limit=2',
                                 '2.53')

    def test_hypervisor_show(self):
        self.assertFollowsLayers(
            'GET', '/v2.1/os-hypervisors/{HOST1_NODE_UUID}', '2.53')

    def test_servers_detail_with_host_status(self):
        self.assertFollowsLayers(
            'GET', '/v2.1/servers/detail?all_tenants=1', '2.16')

    def test_servers_filtered(self):
        self.assertFollowsLayers(
            'GET', '/v2.1/servers?all_tenants=1&host=host1&status=ACTIVE',
            '2.29')

    def test_server_show(self):
        self.assertFollowsLayers('GET', '/v2.1/servers/{WEB1_UUID}', '2.29')

    def test_availability_zones_detail(self):
        self.assertFollowsLayers('GET', '/v2.1/os-availability-zone/detail',
                                 '2.1')

    def test_aggregate_create(self):
        self.assertFollowsLayers(
            'POST', '/v2.1/os-aggregates', '2.41',
            {'aggregate': {'name': 'layers', 'availability_zone': 'az9'}},
            warm_up_body={'aggregate': {'name': 'warm-up'}})

    def test_aggregates_listing(self):
        self.assertFollowsLayers('GET', '/v2.1/os-aggregates', '2.41')

    def test_force_down(self):
        self.assertFollowsLayers(
            'PUT', '/v2.1/os-services/force-down', '2.11',
            {'host': 'host4', 'binary': 'nova-compute', 'forced_down': True})

    def test_service_show(self):
        self.assertFollowsLayers(
            'GET', '/v2.1/os-services/{HOST1_SERVICE_UUID}', '2.53')

    def test_update_on_a_stale_entity_tag(self):
        self.assertFollowsLayers(
            'PUT', '/v2.1/os-services/{HOST1_SERVICE_UUID}', '2.53',
            {'forced_down': True}, status=412,
            headers={'If-Match': '"%s"' % ('0' * 32)})

    def test_host_wide_shutdown(self):
        self.assertFollowsLayers(
            'POST', '/v2.1/os-host-servers/host3/action', '2.1',
            {'mark_shutdown': None})
