"""Microversion negotiation from request headers, as Nova does it."""

from oslotest import base
import testscenarios

from nova_forcedown.api import microversion

load_tests = testscenarios.load_tests_apply_scenarios

STANDARD = microversion.STANDARD_HEADER
LEGACY = microversion.LEGACY_HEADER


class TestFromHeaders(base.BaseTestCase):

    scenarios = [
        ('none', {'headers': {}, 'expected': '2.1'}),
        ('standard', {'headers': {STANDARD: 'compute 2.53'},
                      'expected': '2.53'}),
        ('legacy', {'headers': {LEGACY: '2.11'}, 'expected': '2.11'}),
        ('standard wins', {'headers': {STANDARD: 'compute 2.60',
                                       LEGACY: '2.11'},
                           'expected': '2.60'}),
        ('other service ignored', {'headers': {STANDARD: 'volume 3.5',
                                               LEGACY: '2.20'},
                                   'expected': '2.20'}),
        ('last compute wins', {
            'headers': {STANDARD: 'compute 2.3, volume 3.0, compute 2.40'},
            'expected': '2.40'}),
        ('case-insensitive service', {'headers': {STANDARD: 'Compute 2.7'},
                                      'expected': '2.7'}),
        ('latest', {'headers': {STANDARD: 'compute latest'},
                    'expected': '2.104'}),
        ('legacy last value', {'headers': {LEGACY: '2.5, 2.9'},
                               'expected': '2.9'}),
    ]

    def test_version(self):
        self.assertEqual(self.expected,
                         str(microversion.from_headers(self.headers)))


class TestBadVersions(base.BaseTestCase):

    def test_malformed_is_invalid(self):
        for text in ('2.01', '2', '2.a', 'Latest', '02.1', '2.1.1', ''):
            self.assertRaises(microversion.InvalidVersion,
                              microversion.from_headers,
                              {LEGACY: text or ' '})

    def test_out_of_range_is_unsupported(self):
        for text in ('2.0', '2.105', '3.0', '1.1'):
            self.assertRaises(microversion.UnsupportedVersion,
                              microversion.from_headers, {LEGACY: text})

    def test_response_headers_name_the_version(self):
        headers = microversion.response_headers(
            microversion.Version.parse('2.53'))
        self.assertIn((STANDARD, 'compute 2.53'), headers)
        self.assertIn((LEGACY, '2.53'), headers)
        self.assertEqual([STANDARD, LEGACY],
                         [value for name, value in headers if name == 'Vary'])


class TestVersionTable(base.BaseTestCase):

    def test_versions_ascend_within_the_range(self):
        versions = [microversion.Version.parse(v)
                    for v in microversion.VERSIONS]
        self.assertEqual(sorted(set(versions)), versions)
        self.assertEqual(microversion.MIN_VERSION, versions[0])
        self.assertEqual(microversion.MAX_VERSION, versions[-1])
