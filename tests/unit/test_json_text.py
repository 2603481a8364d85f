"""Response bodies: orjson where it can, the same JSON where it cannot."""

import datetime

from oslo_serialization import jsonutils
from oslotest import base

from nova_forcedown.api import json_text


class TestJsonText(base.BaseTestCase):

    def test_a_listing_reads_back_as_it_was_rendered(self):
        listing = {'servers': [{'name': 'café', 'id': index, 'up': True,
                                'zone': None, 'ratio': 1.5}
                               for index in range(3)]}
        text = json_text.dumps(listing)
        self.assertIsInstance(text, bytes)
        self.assertEqual(listing, jsonutils.loads(text))

    def test_what_orjson_refuses_is_encoded_as_before(self):
        for value in ({'reason': 'bad \udcff byte'},
                      {'at': datetime.datetime(2026, 12, 7, 11, 0)},
                      {1: 'an integer key'},
                      {'big': 2 ** 70}):
            self.assertEqual(jsonutils.dump_as_bytes(value),
                             json_text.dumps(value), value)
