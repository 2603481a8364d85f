"""A listing rendered in chunks is the same JSON document as in one piece."""

import fixtures
from oslo_serialization import jsonutils
from oslotest import base
import webob

from nova_forcedown.api import request as api_request


def _render(number):
    return {'id': number, 'hypervisor_hostname': 'node%d' % number,
            'state': 'up' if number % 2 else 'down', 'note': 'caf\u00e9'}


def _served(response):
    """What a client receives: status, headers and body over WSGI."""
    return webob.Request.blank('/').get_response(response)


class TestListingResponse(base.BaseTestCase):

    def setUp(self):
        super().setUp()
        self.useFixture(fixtures.MonkeyPatch(
            'nova_forcedown.api.request.LISTING_CHUNK', 3))

    def _assert_same_document(self, count, extra=None, iterate=False):
        records = list(range(count))
        expected = dict({'hypervisors': [_render(n) for n in records]},
                        **(extra or {}))

        response = api_request.listing_response(
            'hypervisors', iter(records) if iterate else records, _render,
            extra)
        # What the WSGI server is told before it sends a byte: a response
        # without a length would go out in chunks.
        length = dict(response.headerlist).get('Content-Length')
        served = _served(response)

        self.assertEqual(200, served.status_int)
        self.assertEqual('application/json', served.content_type)
        self.assertEqual(str(len(served.body)), length)
        self.assertEqual(expected, jsonutils.loads(served.body))

    def test_chunk_boundaries(self):
        for count in (0, 1, 2, 3, 4, 6, 7):
            with self.subTest(count=count):
                self._assert_same_document(count)

    def test_links_follow_the_items(self):
        links = [{'rel': 'next', 'href': 'http://127.0.0.1/v2.1/x?marker=6'}]
        self._assert_same_document(7, {'hypervisors_links': links})

    def test_an_error_while_rendering_raises_before_any_byte_is_sent(self):
        def broken(number):
            if number == 5:
                raise RuntimeError('bad row')
            return _render(number)

        self.assertRaises(RuntimeError, api_request.listing_response,
                          'hypervisors', list(range(7)), broken)

    def test_records_read_once_from_an_iterator(self):
        for count in (0, 1, 3, 7):
            with self.subTest(count=count):
                self._assert_same_document(count, iterate=True)

    def test_a_listing_larger_than_the_spool_size_is_the_same(self):
        # Past 200 bytes the text goes to a temporary file: the first
        # chunk of 3 items already crosses it, or only a later one does.
        self.useFixture(fixtures.MonkeyPatch(
            'nova_forcedown.api.request.LISTING_SPOOL_BYTES', 200))
        for count in (1, 3, 4, 7, 50):
            with self.subTest(count=count):
                self._assert_same_document(count, iterate=True)
