"""Extra-spec validation (2.86): what Nova takes and refuses, by kind of
spec, with the entry points installed as a deployment has them."""

from oslotest import base

from nova_forcedown.api import extra_specs
from nova_forcedown import exception


class TestKnownSpecs(base.BaseTestCase):

    def setUp(self):
        super().setUp()
        self.known = extra_specs.load()

    def _refusal(self, name, value):
        try:
            self.known.validate(name, value)
        except exception.ExtraSpecInvalid as exc:
            return str(exc)
        return None

    def assertTaken(self, name, *values):
        for value in values:
            self.assertIsNone(self._refusal(name, value), (name, value))

    def assertRefused(self, name, *values):
        for value in values:
            self.assertIsNotNone(self._refusal(name, value), (name, value))

    def test_every_namespace_nova_validates_is_known(self):
        # Any key at all is an aggregate_instance_extra_specs one.
        for name in ('hw:x', 'hw_rng:x', 'hw_video:x', 'os:x', 'quota:x',
                     'resources:x', 'resources_1:x', 'trait:x', 'trait2:x',
                     'aggregate_instance_extra_specs:', 'capabilities:x',
                     'accel:x', 'pci_passthrough:x', 'vmware:x'):
            self.assertEqual(
                "Validation failed; extra spec '%s' does not appear to be a "
                "valid extra spec." % name, self._refusal(name, '1'))

    def test_names_outside_the_namespaces_are_anyones(self):
        self.assertTaken('evacuable', 'true', 'False', 'anything')
        self.assertTaken('mycloud:tier', 'gold')
        self.assertTaken('hw_cpu:policy', 'x')
        self.assertTaken('nohw:cpu_policy', 'x')

    def test_booleans_are_oslo_utils_words(self):
        self.assertTaken('hw:cpu_realtime', 'True', 'yes', 'on', '1', 'f',
                         'NO', 'off', '0')
        self.assertRefused('hw:cpu_realtime', 'maybe', '', '2', 'truth')

    def test_integers_with_their_bounds(self):
        self.assertTaken('hw:numa_nodes', '1', '64')
        self.assertRefused('hw:numa_nodes', '0', '-1', 'one', '1.0', '')
        self.assertTaken('hw:redirected_usb_ports', '0', '15')
        self.assertRefused('hw:redirected_usb_ports', '16', '-1')
        self.assertTaken('quota:cpu_quota', '-1', '1000')
        self.assertRefused('quota:cpu_period', '-1')

    def test_numbered_specs(self):
        self.assertTaken('hw:numa_cpus.0', '0-3', '0-3,^2', '5')
        self.assertTaken('hw:numa_mem.12', '2048')
        self.assertRefused('hw:numa_cpus.0', 'all', '0-')
        self.assertRefused('hw:numa_cpus.x', '0')
        self.assertRefused('hw:numa_cpusx0', '0')

    def test_page_sizes(self):
        self.assertTaken('hw:mem_page_size', 'large', 'small', 'any',
                         '2048', '2MB', '1GiB', '2048KiB', '4kb')
        self.assertRefused('hw:mem_page_size', 'huge', '2 MB', 'MB')

    def test_resources_and_traits_with_request_groups(self):
        self.assertTaken('resources:VCPU', '2')
        self.assertTaken('resources_gpu:CUSTOM_GPU_A100', '1')
        self.assertRefused('resources:VCPU', 'two')
        self.assertRefused('resources:vcpu', '1')
        self.assertTaken('trait:COMPUTE_STATUS_DISABLED', 'forbidden')
        self.assertTaken('trait1:CUSTOM_SSD', 'required')
        self.assertRefused('trait:CUSTOM_SSD', 'preferred')
        self.assertRefused('trait:custom_ssd', 'required')
        # A group name past 64 characters is no group: the name is in no
        # namespace, and stored as given, as in Nova.
        self.assertTaken('trait%s:HW_CPU_X86_AVX2' % ('g' * 65), 'x')

    def test_scheduler_filters(self):
        self.assertTaken('aggregate_instance_extra_specs:ssd', 'true')
        self.assertTaken('aggregate_instance_extra_specs:a:b', '<in> x')
        self.assertTaken('capabilities:hypervisor_type', 's== QEMU')
        self.assertTaken('capabilities:cpu_info:features', '<in> aes')
        self.assertTaken('capabilities:stats', '>= 1')
        self.assertRefused('capabilities:vcpus:x', '1')
        self.assertRefused('capabilities:colour', 'blue')

    def test_pci_aliases(self):
        self.assertTaken('pci_passthrough:alias', 'a1:2', 'a1:2, b-2:1')
        self.assertRefused('pci_passthrough:alias', 'a1', 'a1:two', 'a1:2,')
