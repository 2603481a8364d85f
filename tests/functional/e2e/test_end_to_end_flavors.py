"""End to end: flavors through the real API server, with python-novaclient
and openstacksdk as an operator and a fence agent use them.

The development server starts with Nova's classic flavors (m1.tiny to
m1.xlarge, ids 1 to 5).
"""

from novaclient import exceptions as nova_exceptions
import openstack

from tests.functional.e2e import test_end_to_end

CLASSIC = ['m1.tiny', 'm1.small', 'm1.medium', 'm1.large', 'm1.xlarge']


class TestFlavorsWithNovaclient(test_end_to_end.EndToEndTestCase):

    def test_classic_flavors_of_the_development_server(self):
        nova = self.nova('2.1')
        flavors = nova.flavors.list()
        self.assertEqual(CLASSIC, [flavor.name for flavor in flavors])
        tiny = nova.flavors.get('1')
        self.assertEqual(('m1.tiny', 512, 1, 1, True),
                         (tiny.name, tiny.ram, tiny.vcpus, tiny.disk,
                          tiny.is_public))

    def test_create_set_keys_and_delete(self):
        nova = self.nova('2.61')
        flavor = nova.flavors.create('gpu.large', 4096, 8, 40,
                                     flavorid='gpu1', is_public=False,
                                     description='With a GPU')
        self.assertEqual(('gpu1', 'With a GPU', {}),
                         (flavor.id, flavor.description,
                          flavor.extra_specs))
        flavor.set_keys({'evacuable': 'true', 'hw:cpu_policy': 'dedicated'})
        self.assertEqual({'evacuable': 'true', 'hw:cpu_policy': 'dedicated'},
                         flavor.get_keys())
        flavor.unset_keys(['hw:cpu_policy'])
        self.assertEqual({'evacuable': 'true'},
                         nova.flavors.get('gpu1').extra_specs)

        # What fence_evacuate asks: every flavor, public or not.
        everything = nova.flavors.list(is_public=None)
        self.assertIn('gpu1', [listed.id for listed in everything])
        self.assertNotIn('gpu1', [listed.id for listed in
                                  nova.flavors.list()])

        nova.flavors.delete('gpu1')
        self.assertRaises(nova_exceptions.NotFound, nova.flavors.get, 'gpu1')

    def test_extra_specs_are_validated_from_2_86(self):
        nova = self.nova('2.86')
        flavor = nova.flavors.get('1')
        error = self.assertRaises(nova_exceptions.BadRequest,
                                  flavor.set_keys, {'hw:cpu_policy': 'bogus'})
        self.assertIn("Validation failed; 'bogus' is not one of: dedicated, "
                      "shared, mixed.", str(error))
        flavor.set_keys({'hw:cpu_policy': 'dedicated', 'evacuable': 'True'})
        self.assertEqual({'hw:cpu_policy': 'dedicated', 'evacuable': 'True'},
                         flavor.get_keys())

    def test_a_duplicate_name_is_a_conflict(self):
        nova = self.nova('2.1')
        error = self.assertRaises(nova_exceptions.Conflict,
                                  nova.flavors.create, 'm1.tiny', 1, 1, 1)
        self.assertIn('Flavor with name m1.tiny already exists.', str(error))


class TestFlavorsWithOpenStackSDK(test_end_to_end.EndToEndTestCase):

    def test_flavors_with_details_and_extra_specs(self):
        conn = openstack.connection.Connection(session=self.session,
                                               compute_api_version='2')
        created = conn.compute.create_flavor(name='evac', ram=1024,
                                             vcpus=2, disk=10, id='evac')
        conn.compute.create_flavor_extra_specs(created, {'evacuable': 'true'})

        flavors = {flavor.name: flavor
                   for flavor in conn.compute.flavors(details=True)}
        self.assertEqual(set(CLASSIC) | {'evac'}, set(flavors))
        self.assertEqual((1024, 2, 10, {'evacuable': 'true'}),
                         (flavors['evac'].ram, flavors['evac'].vcpus,
                          flavors['evac'].disk,
                          flavors['evac'].extra_specs))
        self.assertEqual(16384, flavors['m1.xlarge'].ram)
        found = conn.compute.find_flavor('m1.small', ignore_missing=False)
        self.assertEqual('2', found.id)
        conn.compute.delete_flavor(created)
        self.assertIsNone(conn.compute.find_flavor('evac'))
