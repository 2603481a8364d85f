"""Versioned objects: pinned fingerprints and older-version consumers."""

from oslo_versionedobjects import fixture as ovo_fixture
from oslotest import base

from nova_forcedown import objects
from nova_forcedown.objects import base as objects_base
from nova_forcedown.objects import service as service_obj

objects.register_all()

# The fingerprint of every object: its version and a hash of its fields and
# remotable methods. A test failure here means an object changed: bump its
# VERSION, add a line to its version-history comment, teach
# obj_make_compatible to serve the previous version, then update the hash.
OBJECT_HASHES = {
    'Service': '1.2-6460b07bc15c1e24de11b8bc980d4ad5',
    'ServiceList': '1.0-15ecf022a68ddbb8c2a6739cfc9f8f5e',
}


def _service():
    return service_obj.Service(
        id=1, uuid='7c4e9bd4-2b62-4d7e-9f43-2b1d1a0c7a11', host='compute1',
        binary='nova-compute', topic='compute', report_count=3,
        disabled=False, disabled_reason=None, last_seen_up=None,
        forced_down=True, version=1, rpc_server='compute1',
        availability_zone=None)


class TestObjectVersions(base.BaseTestCase):

    def test_versions_and_hashes_are_pinned(self):
        checker = ovo_fixture.ObjectVersionChecker(
            objects_base.ObjectRegistry.obj_classes())
        expected, actual = checker.test_hashes(OBJECT_HASHES)
        self.assertEqual(expected, actual,
                         'Objects changed: bump their version and update '
                         'OBJECT_HASHES.')


class TestServiceCompatibility(base.BaseTestCase):

    def test_version_1_0_consumers_get_no_forced_down(self):
        primitive = _service().obj_to_primitive(target_version='1.0')
        data = primitive['nova_forcedown_object.data']
        self.assertEqual('1.0', primitive['nova_forcedown_object.version'])
        self.assertNotIn('forced_down', data)
        self.assertEqual('compute1', data['host'])
        self.assertEqual(3, data['report_count'])

    def test_version_1_1_consumers_get_forced_down_and_no_rpc_server(self):
        primitive = _service().obj_to_primitive(target_version='1.1')
        data = primitive['nova_forcedown_object.data']
        self.assertEqual('1.1', primitive['nova_forcedown_object.version'])
        self.assertTrue(data['forced_down'])
        self.assertNotIn('rpc_server', data)

    def test_version_1_2_consumers_get_the_rpc_server(self):
        primitive = _service().obj_to_primitive()
        self.assertEqual('1.2', primitive['nova_forcedown_object.version'])
        self.assertEqual(
            'compute1', primitive['nova_forcedown_object.data']['rpc_server'])

    def test_round_trip_keeps_forced_down(self):
        service = _service()
        copy = service_obj.Service.obj_from_primitive(
            service.obj_to_primitive())
        self.assertTrue(copy.forced_down)
        self.assertEqual(service.uuid, copy.uuid)
