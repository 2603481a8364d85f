"""The fence-storm rule: over the limit after, and a larger share."""

from oslotest import base

from nova_forcedown.objects import fence_storm

Count = fence_storm.zone_counts.ZoneCount


def _breaks(before, after, fraction=0.5):
    return fence_storm.breaks_limit(Count('az1', *before),
                                    Count('az1', *after), fraction)


class TestRule(base.BaseTestCase):

    def test_a_force_down_over_the_limit_breaks_it(self):
        self.assertTrue(_breaks((2, 4), (3, 4)))

    def test_up_to_the_limit_is_allowed(self):
        self.assertFalse(_breaks((1, 4), (2, 4)))
        self.assertTrue(_breaks((1, 4), (2, 4), fraction=0.49))

    def test_the_same_share_is_allowed_even_over_the_limit(self):
        self.assertFalse(_breaks((3, 4), (3, 4)))
        self.assertFalse(_breaks((2, 2), (1, 1)))

    def test_a_lower_share_is_allowed_even_over_the_limit(self):
        self.assertFalse(_breaks((2, 2), (2, 3)))
        self.assertFalse(_breaks((3, 4), (2, 3)))

    def test_a_higher_share_over_the_limit_breaks_it(self):
        self.assertTrue(_breaks((2, 4), (2, 3)))
        self.assertTrue(_breaks((2, 3), (2, 2)))

    def test_a_zone_made_or_emptied(self):
        self.assertTrue(_breaks((0, 0), (1, 1)))
        self.assertFalse(_breaks((0, 0), (1, 2)))
        self.assertFalse(_breaks((1, 1), (0, 0)))

    def test_the_counts_name_the_zone(self):
        self.assertEqual('2 of 3 compute hosts of zone az1',
                         str(Count('az1', 2, 3)))
