"""How ``nova-forcedown-manage db purge --before`` reads its date."""

import datetime

from oslotest import base

from nova_forcedown.cmd import manage

NOW = datetime.datetime(2026, 11, 1, 8, 30)


class TestBefore(base.BaseTestCase):

    def test_the_formats_nova_documents_are_read_as_utc(self):
        for text, expected in (
                ('2026-10-21', datetime.datetime(2026, 10, 21)),
                ('2026-10-21 12:00', datetime.datetime(2026, 10, 21, 12)),
                ('2026-10-21 12:00:05',
                 datetime.datetime(2026, 10, 21, 12, 0, 5)),
                ('Oct 21 2026', datetime.datetime(2026, 10, 21)),
                # What "date -u" prints.
                ('Wed Oct 21 12:00:00 UTC 2026',
                 datetime.datetime(2026, 10, 21, 12)),
                ('2026-10-21T12:00:00Z', datetime.datetime(2026, 10, 21, 12)),
        ):
            self.assertEqual(expected, manage._parse_before(text, NOW), text)

    def test_a_utc_offset_is_converted_to_utc(self):
        self.assertEqual(
            datetime.datetime(2026, 10, 21, 10),
            manage._parse_before('2026-10-21T12:00:00+02:00', NOW))

    def test_a_zone_name_that_is_not_known_is_refused_not_ignored(self):
        error = self.assertRaises(ValueError, manage._parse_before,
                                  'Wed Oct 21 14:00:00 CEST 2026', NOW)
        self.assertIn('time zone is unknown', str(error))

    def test_relative_phrases_are_refused_not_read_as_a_day(self):
        for text in ('yesterday', '30 days ago', 'now - 1 month', ''):
            self.assertRaises(ValueError, manage._parse_before, text, NOW)

    def test_what_is_not_a_date_is_refused(self):
        for text in ('2026-13-01', '2026-02-30', '99999999999999999999'):
            self.assertRaises(ValueError, manage._parse_before, text, NOW)

    def test_a_bare_number_is_refused_not_read_as_a_day_or_a_year(self):
        for text in ('1', '-1', '99', '+2026', ' 7 '):
            error = self.assertRaises(ValueError, manage._parse_before,
                                      text, NOW)
            self.assertIn('is a number, not a date', str(error))

    def test_an_offset_past_the_calendar_is_refused(self):
        for text in ('9999-12-31T23:59:59-23:59',
                     '0001-01-01T00:00:00+23:59'):
            error = self.assertRaises(ValueError, manage._parse_before,
                                      text, NOW)
            self.assertIn('out of the years 1 to 9999', str(error))

    def test_a_cutoff_in_the_future_is_refused(self):
        self.assertEqual(NOW, manage._parse_before('2026-11-01 08:30', NOW))
        error = self.assertRaises(ValueError, manage._parse_before,
                                  '2026-11-01 08:31', NOW)
        self.assertEqual('2026-11-01 08:31:00 UTC is in the future; --all '
                         'purges all that may go', str(error))
