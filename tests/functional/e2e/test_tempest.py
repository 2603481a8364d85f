"""End to end: tempest's own compute API tests, unchanged.

tempest is how OpenStack checks that a cloud's compute API behaves as Nova
does. Its tests of what nova-forcedown serves (the version documents,
services, hypervisors, availability zones, aggregates, flavors with their
access lists and extra specs, the migrations list, servers created,
listed with every filter tempest tries, and deleted) run here as tempest
runs them: in a process of their own,
reading a ``tempest.conf`` that points at the real Keystone on loopback,
whose catalog names the real API server, with dynamic credentials
(tempest makes its own projects and users, admin and member, through
Keystone). The hosts are a fake-driver agent's, which spawns and destroys
the servers tempest creates. The image service in the catalog is the
Glance stand-in, where every image id is an active image: the API reads
each new server's image there, as Nova does.

Left out, and only this: a flavor's test of too little RAM, which uploads
an image with a ``min_ram`` to Glance; the stand-in takes no uploads.
Resize and cold and live migration are not offered, and tempest.conf says
so, as a cloud without them does: tempest skips their tests. There is no
network service (``neutron = false``): tempest skips its server classes
that need a network of their own, which are most of them.
"""

import io
import os
import re
import subprocess
import sys

import fixtures
import subunit
import testtools

from tests.fixtures import keystone_server
from tests.fixtures import nova_stand_ins
from tests.functional.e2e import test_end_to_end_cli

COMPUTE = 'tempest.api.compute.'
ADMIN = COMPUTE + 'admin.'

UPLOADS_AN_IMAGE = re.compile(r'\.test_boot_with_low_ram\[')

# Why tempest skips server tests on this cloud: no network service, no
# volume service, no guest to log in to (instance validation off), and
# tempest's own default of not testing FQDN hostname sanitization.
SKIPPED_WITHOUT_SERVICES = {
    'fixed_network_name needs to be configured to run this test',
    'Volume service not enabled.',
    'Instance validation tests are disabled.',
    'FQDN hostname sanitization is not supported.',
}

# Another image, for the tests that want two (the stand-in has them all).
IMAGE_ALT = '7c0d9e4b-2f61-4a3d-8e5c-b1a2c3d4e5f6'

# What tempest is told of this cloud: compute and image (the Glance
# stand-in) and nothing else. Its servers boot from two of the stand-in's
# images and the development API's m1.tiny and m1.small, and are ACTIVE
# within seconds: a build that takes a minute has failed.
_CONFIG = """[DEFAULT]
log_dir = %(directory)s

[oslo_concurrency]
lock_path = %(directory)s

[auth]
admin_username = admin
admin_password = %(password)s
admin_project_name = admin
admin_domain_name = Default
use_dynamic_credentials = true

[identity]
uri_v3 = %(keystone)s
auth_version = v3
region = %(region)s

[identity-feature-enabled]
api_v2 = false

[compute]
min_microversion = 2.1
max_microversion = latest
region = %(region)s
image_ref = %(image)s
image_ref_alt = %(image_alt)s
flavor_ref = 1
flavor_ref_alt = 2
build_timeout = 60

[compute-feature-enabled]
resize = false
cold_migration = false
live_migration = false

[service_available]
nova = true
glance = true
neutron = false
cinder = false
swift = false

[validation]
run_validation = false
"""

_FINAL = ('success', 'fail', 'skip', 'xfail', 'uxsuccess')


class TempestTestCase(test_end_to_end_cli.CliTestCase):
    """The CLI tests' Keystone, with the Glance stand-in as image service."""

    @classmethod
    def setUpClass(cls):
        super().setUpClass()
        cls.stand_ins = nova_stand_ins.StandIns()
        cls.stand_ins.setUp()
        cls.addClassCleanup(cls.stand_ins.cleanUp)
        identity = cls.keystone.admin.identity
        glance = identity.create_service(name='glance', type='image')
        identity.create_endpoint(
            service_id=glance.id, interface='public',
            url=cls.stand_ins.glance_url, region_id=keystone_server.REGION)

    def run_tempest(self, *modules):
        """{test id: (status, reason or traceback)} of ``modules``' tests.

        A class whose set-up failed counts as one failed test, named
        ``setUpClass (<class>)``.
        """
        directory = self.useFixture(fixtures.TempDir()).path
        with open(os.path.join(directory, 'tempest.conf'), 'w') as config:
            config.write(_CONFIG % {
                'directory': directory,
                'password': keystone_server.ADMIN_PASSWORD,
                'keystone': self.keystone.url,
                'region': keystone_server.REGION,
                'image': nova_stand_ins.IMAGE_ID, 'image_alt': IMAGE_ALT})
        environment = {name: value for name, value in os.environ.items()
                       if not name.startswith('OS_')}
        environment.update(TEMPEST_CONFIG_DIR=directory,
                           TEMPEST_CONFIG='tempest.conf')
        chosen = os.path.join(directory, 'tests')
        with open(chosen, 'w') as listing:
            listing.write('\n'.join(self._tests(environment, modules)))
        result = subprocess.run(
            [sys.executable, '-m', 'subunit.run', '--load-list', chosen,
             *modules], capture_output=True, env=environment, timeout=600,
            stdin=subprocess.DEVNULL)
        return _outcomes(result.stdout)

    @staticmethod
    def _tests(environment, modules):
        listed = subprocess.run(
            [sys.executable, '-m', 'testtools.run', '--list', *modules],
            capture_output=True, text=True, env=environment, timeout=120,
            stdin=subprocess.DEVNULL, check=True)
        return [test for test in listed.stdout.split()
                if not UPLOADS_AN_IMAGE.search(test)]

    def assertPassed(self, outcomes, classes):
        """Every test passed, and ``classes`` (tempest's) had tests run."""
        failed = {test: detail for test, (status, detail) in outcomes.items()
                  if status not in ('success', 'skip')}
        self.assertEqual({}, failed, 'API log:\n' + self.api.output()[-3000:])
        passed = {_class_of(test) for test, (status, _) in outcomes.items()
                  if status == 'success'}
        self.assertEqual(set(), set(classes) - passed)

    def skipped(self, outcomes):
        return {test.split('[')[0]: detail
                for test, (status, detail) in outcomes.items()
                if status == 'skip'}


def _outcomes(stream):
    found = {}

    def on_test(test):
        if test['status'] in _FINAL:
            details = test['details']
            found[test['id']] = (test['status'], ''.join(
                details[key].as_text() for key in ('reason', 'traceback')
                if key in details))

    summary = testtools.StreamToDict(on_test)
    summary.startTestRun()
    subunit.ByteStreamToStreamResult(
        io.BytesIO(stream), non_subunit_name='stdout').run(summary)
    summary.stopTestRun()
    return found


def _class_of(test):
    return test.split('[')[0].rsplit('.', 2)[-2]


class TestTempestComputeApi(TempestTestCase):

    def test_versions_services_and_hypervisors(self):
        outcomes = self.run_tempest(
            COMPUTE + 'test_versions', ADMIN + 'test_services',
            ADMIN + 'test_services_negative', ADMIN + 'test_hypervisor',
            ADMIN + 'test_hypervisor_negative')

        self.assertPassed(outcomes, [
            'TestVersions', 'ServicesAdminTestJSON',
            'ServicesAdminNegativeTestJSON',
            'ServicesAdminNegativeV253TestJSON', 'HypervisorAdminTestJSON',
            'HypervisorAdminV228Test', 'HypervisorAdminUnderV252Test',
            'HypervisorAdminV253TestBase',
            'HypervisorAdminNegativeTestJSON',
            'HypervisorAdminNegativeUnderV252Test'])
        self.assertEqual({}, self.skipped(outcomes))

    def test_zones_aggregates_and_migrations(self):
        outcomes = self.run_tempest(
            ADMIN + 'test_availability_zone',
            ADMIN + 'test_availability_zone_negative',
            ADMIN + 'test_aggregates_negative', ADMIN + 'test_migrations')

        self.assertPassed(outcomes, [
            'AZAdminV2TestJSON', 'AZAdminNegativeTestJSON',
            'AggregatesAdminNegativeTestJSON', 'MigrationsAdminTest'])
        # Only what tempest.conf says this cloud does not offer.
        self.assertEqual(
            {'Resize not available.', 'Cold migration not available.'},
            set(self.skipped(outcomes).values()))

    def test_flavors(self):
        outcomes = self.run_tempest(
            COMPUTE + 'flavors.test_flavors',
            COMPUTE + 'flavors.test_flavors_negative',
            ADMIN + 'test_flavors', ADMIN + 'test_flavors_access',
            ADMIN + 'test_flavors_access_negative',
            ADMIN + 'test_flavors_extra_specs',
            ADMIN + 'test_flavors_extra_specs_negative',
            ADMIN + 'test_flavors_microversions')

        self.assertPassed(outcomes, [
            'FlavorsV2TestJSON', 'FlavorsAdminTestJSON',
            'FlavorsAccessTestJSON', 'FlavorsAccessNegativeTestJSON',
            'FlavorsExtraSpecsTestJSON', 'FlavorMetadataValidation',
            'FlavorsExtraSpecsNegativeTestJSON', 'FlavorsV255TestJSON',
            'FlavorsV261TestJSON'])
        self.assertEqual({}, self.skipped(outcomes))

    def test_servers_created_and_listed_with_filters(self):
        outcomes = self.run_tempest(
            COMPUTE + 'servers.test_create_server',
            COMPUTE + 'servers.test_list_server_filters')

        self.assertPassed(outcomes, [
            'ServersTestJSON', 'ServersTestManualDisk',
            'ListServerFiltersTestJSON'])
        self.assertLessEqual(
            set(self.skipped(outcomes).values()), SKIPPED_WITHOUT_SERVICES)

    def test_servers_created_and_deleted(self):
        outcomes = self.run_tempest(
            ADMIN + 'test_delete_server',
            COMPUTE + 'servers.test_multiple_create_negative')

        self.assertPassed(outcomes, [
            'DeleteServersAdminTestJSON', 'MultipleCreateNegativeTestJSON'])
        self.assertEqual({}, self.skipped(outcomes))
