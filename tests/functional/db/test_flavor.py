"""Flavor queries on real SQLite, PostgreSQL and MariaDB databases: the
rules whose SQL differs by backend (duplicates, regular expressions, NULLs
in a sort key) answer alike on each."""

import threading

from nova_forcedown import context
from nova_forcedown import exception
from nova_forcedown.objects import flavor as flavor_obj
from tests.fixtures import databases

Filters = flavor_obj.Filters


def _ids(flavors):
    return [flavor.flavorid for flavor in flavors]


class FlavorTestsMixin:

    def setUp(self):
        super().setUp()
        flavor_obj.create_classic(self.context)

    def test_a_duplicate_is_named_by_what_clashed(self):
        error = self.assertRaises(exception.FlavorExists, flavor_obj.create,
                                  self.context, 'm1.tiny', 1, 1, 1,
                                  flavorid='new')
        self.assertEqual('Flavor with name m1.tiny already exists.',
                         str(error))
        error = self.assertRaises(exception.FlavorIdExists, flavor_obj.create,
                                  self.context, 'new', 1, 1, 1, flavorid='1')
        self.assertEqual('Flavor with ID 1 already exists.', str(error))

    def test_the_name_filter_is_a_regular_expression(self):
        self.assertEqual(['1', '5'], _ids(flavor_obj.get_all(
            self.context, Filters(name='^m1\\.(tiny|x)'))))
        self.assertEqual(['2'], _ids(flavor_obj.get_all(
            self.context, Filters(name='mall'))))

    def test_paging_over_a_sort_key_with_nulls(self):
        flavor_obj.update_description(self.context, '3', 'b')
        flavor_obj.update_description(self.context, '5', 'a')
        pages, marker = [], None
        while True:
            page = flavor_obj.get_all(self.context, sort_key='description',
                                      limit=2, marker=marker)
            if not page:
                break
            pages.append(_ids(page))
            marker = page[-1].flavorid
        everything = _ids(flavor_obj.get_all(self.context,
                                             sort_key='description'))
        self.assertEqual(['1', '2', '4', '5', '3'], everything)
        self.assertEqual(everything, sum(pages, []))
        backwards = _ids(flavor_obj.get_all(
            self.context, sort_key='description', sort_dir='desc',
            limit=3, marker='5'))
        self.assertEqual(['4', '2', '1'], backwards)

    def test_a_member_sees_public_and_shared_flavors_only(self):
        flavor_obj.create(self.context, 'mine', 1, 1, 1, flavorid='mine',
                          is_public=False, projects=['p1'])
        flavor_obj.create(self.context, 'theirs', 1, 1, 1,
                          flavorid='theirs', is_public=False,
                          projects=['p2'])
        member = context.RequestContext(user_id='u', project_id='p1',
                                        is_admin=False)
        self.assertEqual(['1', '2', '3', '4', '5', 'mine'], _ids(
            flavor_obj.get_all(member, Filters(is_public=True,
                                               disabled=False))))
        self.assertRaises(exception.FlavorNotFound,
                          flavor_obj.get_by_flavor_id,
                          member, 'theirs')
        self.assertRaises(exception.MarkerNotFound, flavor_obj.get_all,
                          member, marker='theirs')
        self.assertEqual(['p2'], flavor_obj.projects(self.context,
                                                     'theirs'))

    def test_sharing_twice_and_unsharing_what_is_not_shared(self):
        flavor_obj.create(self.context, 'mine', 1, 1, 1, flavorid='mine',
                          is_public=False, projects=['p1'])
        self.assertEqual(['p1', 'p2'],
                         flavor_obj.add_access(self.context, 'mine', 'p2'))
        error = self.assertRaises(exception.FlavorAccessExists,
                                  flavor_obj.add_access, self.context,
                                  'mine', 'p2')
        self.assertEqual('Flavor access already exists for flavor mine and '
                         'project p2 combination.', str(error))
        self.assertEqual(['p2'], flavor_obj.remove_access(self.context,
                                                          'mine', 'p1'))
        self.assertRaises(exception.FlavorAccessNotFound,
                          flavor_obj.remove_access, self.context, 'mine',
                          'p1')
        self.assertEqual(['p2'], flavor_obj.projects(self.context, 'mine'))

    def test_deleting_a_flavor_deletes_its_specs_and_projects(self):
        flavor_obj.create(self.context, 'gone', 1, 1, 1, flavorid='gone',
                          is_public=False, projects=['p1'])
        flavor_obj.set_extra_specs(self.context, 'gone',
                                   {'evacuable': 'true'})
        flavor_obj.destroy(self.context, 'gone')
        self.assertRaises(exception.FlavorNotFound,
                          flavor_obj.get_by_flavor_id,
                          self.context, 'gone')
        again = flavor_obj.create(self.context, 'gone', 1, 1, 1,
                                  flavorid='gone')
        self.assertEqual(({}, []), (again.extra_specs, flavor_obj.projects(
            self.context, 'gone')))


class ConcurrentExtraSpecsMixin:
    """Writers in threads, on database servers only.

    The SQLite test database is one connection, which threads cannot share.
    """

    def setUp(self):
        super().setUp()
        flavor_obj.create_classic(self.context)

    def test_concurrent_writers_of_one_key_both_succeed(self):
        """Requests that add one new key at once all succeed.

        The loser of the insert reads again and updates, as Nova retries.
        """
        results, errors = [], []
        writers = 8
        start = threading.Barrier(writers)

        def write(value):
            start.wait()
            try:
                flavor_obj.set_extra_specs(self.context, '1',
                                           {'evacuable': value})
                results.append(value)
            except Exception as exc:  # noqa: reported by the assertion
                errors.append(exc)

        threads = [threading.Thread(target=write, args=(str(number),))
                   for number in range(writers)]
        for thread in threads:
            thread.start()
        for thread in threads:
            thread.join()
        self.assertEqual([], errors)
        self.assertEqual(writers, len(results))
        flavor = flavor_obj.get_by_flavor_id(self.context, '1')
        self.assertIn(flavor.extra_specs['evacuable'], results)


databases.backend_test_cases(FlavorTestsMixin, globals())
databases.backend_test_cases(ConcurrentExtraSpecsMixin, globals(),
                             databases.MIGRATED_FIXTURES[1:])
