"""Microversion negotiation from request headers, as Nova does it."""

import microversion_parse
from oslotest import base
import testscenarios
import webob.exc

from nova_forcedown.api import microversion
from nova_forcedown.api import request as api_request

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
        # '-2.1', '+2.1', '2. 1' and '2.01' are ints to Python, not to Nova.
        for text in ('2.01', '2', '2.a', 'Latest', '02.1', '2.1.1', '',
                     '-2.1', '+2.1', '2. 1', '2.', '.1'):
            self.assertRaises(microversion.InvalidVersion,
                              microversion.from_headers,
                              {LEGACY: text or ' '})

    def test_malformed_message_names_the_text(self):
        exc = self.assertRaises(microversion.InvalidVersion,
                                microversion.from_headers,
                                {STANDARD: 'compute 2.x'})
        self.assertEqual('API Version String 2.x is of invalid format. Must '
                         'be of format MajorNum.MinorNum.', str(exc))

    def test_out_of_range_is_unsupported(self):
        for text in ('2.0', '2.105', '3.0', '1.1', '2.99999999999999999999'):
            exc = self.assertRaises(microversion.UnsupportedVersion,
                                    microversion.from_headers, {LEGACY: text})
            self.assertEqual(text, str(exc.version))

    def test_digits_past_int_s_limit_are_out_of_range(self):
        # Python's int() refuses more than 4300 digits.
        for text in ('2.' + '9' * 5000, '9' * 5000 + '.1',
                     '1' + '0' * 5000 + '.0'):
            exc = self.assertRaises(microversion.UnsupportedVersion,
                                    microversion.from_headers, {LEGACY: text})
            self.assertEqual(text, str(exc.version))
            self.assertIn((LEGACY, text),
                          microversion.response_headers(exc.version))

    def test_response_headers_name_the_version(self):
        headers = microversion.response_headers(
            microversion.from_headers({LEGACY: '2.53'}))
        self.assertIn((STANDARD, 'compute 2.53'), headers)
        self.assertIn((LEGACY, '2.53'), headers)
        self.assertEqual([STANDARD, LEGACY],
                         [value for name, value in headers if name == 'Vary'])


class TestMatches(base.BaseTestCase):
    """A request's version against the table's named versions."""

    def test_one_bound_means_that_version_or_later(self):
        version = microversion.from_headers({STANDARD: 'compute 2.60'})
        self.assertTrue(version.matches(microversion.V2_53))
        self.assertTrue(version.matches(microversion.V2_1))
        self.assertFalse(version.matches(microversion.V2_75))

    def test_two_bounds_are_inclusive(self):
        version = microversion.from_headers({STANDARD: 'compute 2.53'})
        self.assertTrue(version.matches(microversion.V2_53,
                                        microversion.V2_53))
        self.assertFalse(version.matches(microversion.V2_1,
                                         microversion.V2_33))

    def test_latest_and_no_header(self):
        latest = microversion.from_headers({STANDARD: 'compute latest'})
        self.assertTrue(latest.matches(microversion.V2_104))
        self.assertFalse(microversion.from_headers({}).matches(
            microversion.V2_11))

    def test_legacy_v2_is_the_minimum(self):
        version = microversion.LEGACY_V2_VERSION
        self.assertEqual('2.1', str(version))
        self.assertTrue(version.matches(microversion.V2_1))
        self.assertFalse(version.matches(microversion.V2_11))


class _DecoratedHandlerTestCase(base.BaseTestCase):
    """Calls ``_handler`` at a microversion, as the router would."""

    def _call(self, version):
        req = api_request.Request.blank('/')
        req.environ[api_request.ENV_VERSION] = version
        return self._handler(req)


class TestRemovedIn(_DecoratedHandlerTestCase):

    @staticmethod
    @microversion.removed_in(microversion.V2_53)
    def _handler(req):
        return 'served'

    def test_served_before_the_removal(self):
        self.assertEqual('served', self._call(
            microversion.from_headers({LEGACY: '2.52'})))
        self.assertEqual('served', self._call(microversion.LEGACY_V2_VERSION))

    def test_not_found_from_the_removal_on(self):
        for text in ('2.53', '2.104'):
            self.assertRaises(webob.exc.HTTPNotFound, self._call,
                              microversion.from_headers({LEGACY: text}))


class TestAddedIn(_DecoratedHandlerTestCase):

    @staticmethod
    @microversion.added_in(microversion.V2_81)
    def _handler(req):
        return 'served'

    def test_not_found_before_the_addition(self):
        for version in (microversion.from_headers({LEGACY: '2.80'}),
                        microversion.LEGACY_V2_VERSION):
            self.assertRaises(webob.exc.HTTPNotFound, self._call, version)

    def test_served_from_the_addition_on(self):
        for text in ('2.81', '2.104'):
            self.assertEqual('served', self._call(
                microversion.from_headers({LEGACY: text})))


class TestVersionTable(base.BaseTestCase):

    def test_versions_ascend_within_the_range(self):
        versions = [microversion_parse.parse_version_string(text)
                    for text in microversion.VERSIONS]
        self.assertEqual(sorted(set(versions)), versions)
        self.assertEqual(microversion.MIN_VERSION, versions[0])
        self.assertEqual(microversion.MAX_VERSION, versions[-1])

    def test_each_name_is_its_version(self):
        for text in microversion.VERSIONS:
            name = 'V' + text.replace('.', '_')
            self.assertEqual(text, str(getattr(microversion, name)))
