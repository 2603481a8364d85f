"""Configuration as an operator writes it: files, checks and errors."""

import os

import fixtures
from oslo_config import cfg
from oslotest import base

from nova_forcedown import conf as nf_conf


class ConfigFileTestCase(base.BaseTestCase):

    def setUp(self):
        super().setUp()
        self.directory = self.useFixture(fixtures.TempDir()).path
        self.log = self.useFixture(fixtures.FakeLogger(
            name='nova_forcedown.conf.default'))

    def _make_conf(self, text):
        path = os.path.join(self.directory, 'nova_forcedown.conf')
        with open(path, 'w') as config_file:
            config_file.write(text)
        return nf_conf.make_conf(['--config-file', path],
                                 default_config_files=[],
                                 default_config_dirs=[])


class TestServiceDownTime(ConfigFileTestCase):

    def test_defaults_are_nova_s(self):
        conf = self._make_conf('')
        self.assertEqual(10, conf.report_interval)
        self.assertEqual(60, conf.service_down_time)
        self.assertEqual('', self.log.output)

    def test_down_time_equal_to_the_interval_is_raised(self):
        conf = self._make_conf('[DEFAULT]\nreport_interval = 30\n'
                               'service_down_time = 30\n')
        self.assertEqual(75, conf.service_down_time)
        self.assertIn('service_down_time (30) must be larger than '
                      'report_interval (30); using 75', self.log.output)

    def test_down_time_below_the_interval_is_raised(self):
        conf = self._make_conf('[DEFAULT]\nreport_interval = 9\n'
                               'service_down_time = 5\n')
        self.assertEqual(22, conf.service_down_time)
        self.assertIn('using 22', self.log.output)

    def test_down_time_above_the_interval_is_kept(self):
        conf = self._make_conf('[DEFAULT]\nreport_interval = 30\n'
                               'service_down_time = 31\n')
        self.assertEqual(31, conf.service_down_time)
        self.assertEqual('', self.log.output)


class TestInvalidValues(ConfigFileTestCase):

    def _assert_refused(self, text, option):
        """Refused, naming ``option`` (``[group] name``) and no repr."""
        error = self.assertRaises(cfg.Error, self._make_conf, text)
        self.assertTrue(str(error).startswith(option + ' is not valid: '),
                        error)
        self.assertNotIn('LocationInfo', str(error))

    def test_not_a_number(self):
        self._assert_refused('[DEFAULT]\nreport_interval = ten\n',
                             '[DEFAULT] report_interval')

    def test_below_the_minimum(self):
        self._assert_refused('[DEFAULT]\nservice_down_time = 0\n',
                             '[DEFAULT] service_down_time')

    def test_in_a_group(self):
        self._assert_refused('[api]\nmax_limit = lots\n', '[api] max_limit')

    def test_not_one_of_the_choices(self):
        self._assert_refused('[api]\nauth_strategy = trust-me\n',
                             '[api] auth_strategy')

    def test_an_oslo_db_option(self):
        self._assert_refused('[database]\nmax_retries = often\n',
                             '[database] max_retries')

    def test_a_bad_port(self):
        self._assert_refused('[wsgi]\nport = 99999\n', '[wsgi] port')

    def test_a_forced_down_fraction_outside_0_to_1(self):
        for value in ('0', '-0.1', '1.5', 'half'):
            self._assert_refused(
                '[fencing]\nmax_forced_down_fraction = %s\n' % value,
                '[fencing] max_forced_down_fraction')


class TestFencingGuardOption(ConfigFileTestCase):

    def test_off_by_default(self):
        self.assertIsNone(
            self._make_conf('').fencing.max_forced_down_fraction)

    def test_a_fraction_up_to_1(self):
        for text, value in (('0.25', 0.25), ('1', 1.0), ('1e-3', 0.001)):
            conf = self._make_conf(
                '[fencing]\nmax_forced_down_fraction = %s\n' % text)
            self.assertEqual(value, conf.fencing.max_forced_down_fraction)


class TestDatabasePool(ConfigFileTestCase):

    def test_one_pooled_connection_per_wsgi_thread(self):
        self.assertEqual(8, self._make_conf('').database.max_pool_size)
        conf = self._make_conf('[wsgi]\nthreads = 16\n')
        self.assertEqual(16, conf.database.max_pool_size)

    def test_a_pool_size_in_the_file_wins(self):
        conf = self._make_conf('[wsgi]\nthreads = 16\n'
                               '[database]\nmax_pool_size = 3\n')
        self.assertEqual(3, conf.database.max_pool_size)
