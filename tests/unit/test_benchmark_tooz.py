"""The tooz run of the benchmark keeps to a key namespace of its own."""

import urllib.parse

from oslotest import base

from tools.benchmark import tooz_liveness


class NamespacedTest(base.BaseTestCase):

    def _query(self, url):
        return urllib.parse.parse_qs(urllib.parse.urlsplit(url).query)

    def test_namespace_added_to_a_bare_url(self):
        url = tooz_liveness.namespaced('redis://127.0.0.1:6379', 'run-1')
        self.assertEqual({'namespace': ['run-1']}, self._query(url))
        self.assertTrue(url.startswith('redis://127.0.0.1:6379?'))

    def test_options_of_the_url_kept(self):
        url = tooz_liveness.namespaced(
            'redis://127.0.0.1:6379?socket_timeout=5&db=3', 'run-2')
        self.assertEqual({'socket_timeout': ['5'], 'db': ['3'],
                          'namespace': ['run-2']}, self._query(url))
