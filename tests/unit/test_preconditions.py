"""If-Match, parsed strictly: ``*``, a list of entity tags, or 400."""

from oslotest import base
import webob
import webob.exc

from nova_forcedown.api import preconditions


def _if_match(value):
    req = webob.Request.blank('/')
    if value is not None:
        # As a WSGI server hands a header over: its bytes as latin-1.
        req.environ['HTTP_IF_MATCH'] = value
    return preconditions.if_match(req)


class TestIfMatch(base.BaseTestCase):

    def test_no_header_is_no_condition(self):
        self.assertIsNone(_if_match(None))

    def test_any_tag_is_no_condition(self):
        for value in ('*', ' * ', '\t*'):
            with self.subTest(value=value):
                self.assertIsNone(_if_match(value))

    def test_lists_of_tags(self):
        for value, tags in (
                ('"a1"', ('"a1"',)),
                ('"a1", "b2"', ('"a1"', '"b2"')),
                ('"a1","b2"', ('"a1"', '"b2"')),
                (' "a1" ,\t"b2" ', ('"a1"', '"b2"')),
                # Empty list elements are allowed (RFC 9110, 5.6.1).
                (', "a1",, "b2",', ('"a1"', '"b2"')),
                ('""', ('""',)),
                # A comma belongs to a tag between its quotes.
                ('"a,b"', ('"a,b"',)),
                # Weak tags are kept weak: compared strongly, they never
                # match a strong tag.
                ('W/"a1", "b2"', ('W/"a1"', '"b2"'))):
            with self.subTest(value=value):
                self.assertEqual(tags, _if_match(value))

    def test_bytes_beyond_ascii_are_read_as_utf8(self):
        self.assertEqual(('"café"',),
                         _if_match('"café"'.encode().decode('latin-1')))

    def test_malformed_values_are_refused(self):
        for value in ('', ' ', ',', 'a1', 'a1b2c3', '"a1', 'a1"',
                      '"a1" "b2"', '"a1"x', 'w/"a1"', 'W/ "a1"',
                      '"a"b"', '*, "a1"', '"a1", *', '**', '"\x7f"',
                      '"a\x01"', "'a1'"):
            with self.subTest(value=value):
                error = self.assertRaises(webob.exc.HTTPBadRequest,
                                          _if_match, value)
                self.assertEqual(preconditions.MALFORMED, error.explanation)

    def test_a_long_list_is_read_in_linear_time(self):
        value = ', ' * 50000 + '"a1"' + ' ,' * 50000
        self.assertEqual(('"a1"',), _if_match(value))
        self.assertRaises(webob.exc.HTTPBadRequest, _if_match,
                          ', ' * 50000 + 'x')
