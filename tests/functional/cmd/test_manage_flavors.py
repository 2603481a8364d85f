"""nova-forcedown-manage flavor create and flavor list: flavors for a
development cloud or a test, without the API."""


from tests.fixtures import commands
from tests.functional.cmd import test_manage_service

COLUMNS = ['ID', 'Name', 'RAM', 'Disk', 'Ephemeral', 'VCPUs', 'Is Public']


class TestFlavorCommands(test_manage_service.ServiceCommandTestCase):
    """A fresh database and ``manage()``, as the service commands' tests."""

    def create_ok(self, *args):
        result = self.manage('flavor', 'create', *args)
        self.assertEqual(0, result.returncode, result.stderr)
        return result.stdout

    def listed(self):
        result = self.manage('flavor', 'list')
        self.assertEqual(0, result.returncode, result.stderr)
        return commands.parse_table(result.stdout)

    def test_created_flavors_are_listed_public_and_private(self):
        self.assertEqual(
            'Flavor gpu.large created with ID gpu1.\n',
            self.create_ok('gpu.large', '--ram', '4096', '--vcpus', '8',
                           '--disk', '40', '--id', 'gpu1', '--private'))
        self.create_ok('m1.tiny', '--ram', '512', '--vcpus', '1', '--disk',
                       '1', '--id', '1')

        self.assertEqual(
            [{'ID': '1', 'Name': 'm1.tiny', 'RAM': '512', 'Disk': '1',
              'Ephemeral': '0', 'VCPUs': '1', 'Is Public': 'True'},
             {'ID': 'gpu1', 'Name': 'gpu.large', 'RAM': '4096',
              'Disk': '40', 'Ephemeral': '0', 'VCPUs': '8',
              'Is Public': 'False'}],
            self.listed())

    def test_without_an_id_the_flavor_gets_a_uuid(self):
        self.create_ok('small', '--ram', '2048', '--vcpus', '1', '--disk',
                       '20')
        [row] = self.listed()
        self.assertRegex(row['ID'], '^[0-9a-f]{8}-([0-9a-f]{4}-){3}'
                                    '[0-9a-f]{12}$')

    def test_a_duplicate_is_refused_with_nova_text(self):
        self.create_ok('small', '--ram', '1', '--vcpus', '1', '--disk', '0',
                       '--id', 's')
        by_name = self.manage('flavor', 'create', 'small', '--ram', '1',
                              '--vcpus', '1', '--disk', '0')
        by_id = self.manage('flavor', 'create', 'other', '--ram', '1',
                            '--vcpus', '1', '--disk', '0', '--id', 's')
        self.assertEqual((1, 'nova-forcedown-manage: Flavor with name small '
                             'already exists.\n'),
                         (by_name.returncode, by_name.stderr))
        self.assertEqual((1, 'nova-forcedown-manage: Flavor with ID s '
                             'already exists.\n'),
                         (by_id.returncode, by_id.stderr))

    def test_sizes_are_checked(self):
        result = self.manage('flavor', 'create', 'none', '--ram', '0',
                             '--vcpus', '1', '--disk', '0')
        self.assertEqual(2, result.returncode)
        self.assertIn('--ram', result.stderr)
        self.assertEqual([], self.listed())

    def test_no_flavors_is_an_empty_table(self):
        result = self.manage('flavor', 'list')
        self.assertEqual(0, result.returncode, result.stderr)
        self.assertEqual([], commands.parse_table(result.stdout))
        self.assertIn('| ' + ' | '.join(COLUMNS) + ' |', result.stdout)
