"""Route tables from controller entry points."""

from oslotest import base

from nova_forcedown.api import router


def _handler(req):
    return None


class TestRouteTables(base.BaseTestCase):

    def test_every_controller_entry_point_contributes(self):
        table = router.load_route_table()
        for path in ('/os-services', '/os-services/{id}', '/os-hypervisors',
                     '/os-hypervisors/detail', '/extensions',
                     '/versions/v2.1'):
            self.assertIn(path, table)
        self.assertEqual({'GET', 'PUT', 'DELETE'},
                         set(table['/os-services/{id}']))

    def test_tables_merge_by_path(self):
        table = router.merge_route_tables([
            ('a', {'/things': {'GET': _handler}}),
            ('b', {'/things': {'POST': _handler}}),
        ])
        self.assertEqual({'GET', 'POST'}, set(table['/things']))

    def test_duplicate_path_and_method_fails(self):
        self.assertRaisesRegex(
            router.DuplicateRoute, 'GET /things is routed twice',
            router.merge_route_tables,
            [('a', {'/things': {'GET': _handler}}),
             ('b', {'/things': {'GET': _handler}})])

    def test_fixed_words_are_matched_before_ids(self):
        mapper = router.build_mapper(router.load_route_table())
        match = mapper.match('/os-hypervisors/detail')
        self.assertEqual('/os-hypervisors/detail', match['_path'])
        match = mapper.match('/0a1b/os-hypervisors/statistics')
        self.assertEqual('/os-hypervisors/statistics', match['_path'])
        self.assertEqual('0a1b', match['project_id'])

    def test_a_fixed_word_wins_whichever_table_routed_the_id_first(self):
        mapper = router.build_mapper(router.merge_route_tables([
            ('writes', {'/servers/{id}': {'DELETE': _handler}}),
            ('reads', {'/servers/detail': {'GET': _handler},
                       '/servers/{id}': {'GET': _handler}}),
        ]))
        self.assertEqual('/servers/detail',
                         mapper.match('/servers/detail')['_path'])
        self.assertEqual('/servers/detail',
                         mapper.match('/0a1b/servers/detail')['_path'])
        self.assertEqual('/servers/{id}', mapper.match('/servers/x')['_path'])

    def test_project_id_must_be_hex_and_dashes(self):
        mapper = router.build_mapper(router.load_route_table())
        self.assertIsNone(mapper.match('/not-a-project!/os-services'))
        self.assertIsNone(mapper.match('/xyz/os-services'))
