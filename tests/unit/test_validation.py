"""Body validation: Nova's name rules and its wording of errors."""

from oslo_serialization import jsonutils
from oslotest import base
import webob.exc

from nova_forcedown.api import request as api_request
from nova_forcedown.api import validation

NAME_RULE = ("An invalid 'name' value was provided. The name must be: "
             "printable characters. Can not start or end with whitespace.")
AZ_RULE = ("An invalid 'name' value was provided. The name must be: "
           "printable characters except :.Can not start or end with "
           "whitespace.")
SPACES_RULE = ("An invalid 'name' value was provided. The name must be: "
               "printable characters with at least one non space character")


def _message(instance, schema, where=validation.BODY_FIELD):
    error = None
    try:
        validation.validate(instance, schema, where)
    except webob.exc.HTTPBadRequest as exc:
        error = exc.explanation
    return error


def _object(**properties):
    return {'type': 'object', 'properties': properties,
            'additionalProperties': False}


class TestNames(base.BaseTestCase):

    def test_printable_names_pass(self):
        for text in ('agg1', 'rack 2', 'caf\xe9 \u2603', 'a', 'x' * 255,
                     'in\u00a0between', 'a:b', '\ufffd'):
            self.assertIsNone(_message(text, validation.name), text)

    def test_spaces_at_an_end_are_refused(self):
        for text in (' agg', 'agg ', '\u00a0agg', 'agg\u3000', ' '):
            self.assertEqual(NAME_RULE, _message(text, validation.name),
                             text)

    def test_characters_that_are_not_printable_are_refused(self):
        # Controls, formats, line separators; beyond U+FFFF as Nova.
        for text in ('a\tb', 'a\nb', 'a\x7fb', 'a\u200bb', 'a\u2028b',
                     '\U0001f525', 'a\uffffb'):
            self.assertEqual(NAME_RULE, _message(text, validation.name),
                             repr(text))

    def test_empty_and_long_names_are_refused_by_length(self):
        self.assertIn('should be non-empty', _message('', validation.name))
        self.assertIn('is too long', _message('x' * 256, validation.name))

    def test_a_zone_name_has_no_colon(self):
        self.assertIsNone(_message('az 1', validation.az_name))
        for text in ('az:1', ':', ' az'):
            self.assertEqual(AZ_RULE, _message(text, validation.az_name))

    def test_spaces_around_are_allowed_where_names_are_stripped(self):
        schema = validation.name_with_leading_trailing_spaces
        for text in (' agg ', 'agg', '\u00a0a'):
            self.assertIsNone(_message(text, schema), text)
        for text in ('   ', '\u3000', ' a\tb '):
            self.assertEqual(SPACES_RULE, _message(text, schema), text)

    def test_other_types_are_refused_by_type(self):
        self.assertEqual("5 is not of type 'string'",
                         _message(5, validation.name))


class TestErrorWording(base.BaseTestCase):

    def test_a_nested_body_error_names_the_innermost_field(self):
        schema = _object(aggregate=_object(name=validation.name_string))
        self.assertEqual(
            "Invalid input for field/attribute name. Value: 5. 5 is not of "
            "type 'string'",
            _message({'aggregate': {'name': 5}}, schema))

    def test_a_name_rule_is_named_where_it_breaks(self):
        schema = _object(aggregate=_object(name=validation.name,
                                           zone=validation.az_name))
        self.assertEqual(NAME_RULE,
                         _message({'aggregate': {'name': 'a '}}, schema))
        self.assertEqual(AZ_RULE,
                         _message({'aggregate': {'zone': 'a:b'}}, schema))

    def test_alternatives_that_all_fail_are_named_together(self):
        # As Nova says it: not why each alternative failed.
        schema = _object(aggregate=_object(
            zone={'oneOf': [validation.az_name, {'type': 'null'}]}))
        for zone in ('a:b', ''):
            self.assertEqual(
                "Invalid input for field/attribute zone. Value: %s. %r is "
                "not valid under any of the given schemas" % (zone, zone),
                _message({'aggregate': {'zone': zone}}, schema))

    def test_an_item_of_a_list_names_its_field(self):
        schema = _object(cache={'type': 'array', 'items': _object(
            id=validation.uuid)})
        self.assertEqual(
            "Invalid input for field/attribute id. Value: abc. 'abc' is not "
            "a 'uuid'",
            _message({'cache': [{'id': 'abc'}]}, schema))
        self.assertIsNone(_message(
            {'cache': [{'id': '9c6d7a5e-8f3b-4c2a-9e1d-0a1b2c3d4e5f'}]},
            schema))

    def test_a_query_error_names_the_parameter(self):
        schema = _object(limit={'type': 'array', 'items':
                                validation.non_negative_integer_string})
        self.assertEqual(
            "Invalid input for query parameters limit. Value: x. 'x' does "
            "not match '^[0-9]+$'",
            _message({'limit': ['x']}, schema, validation.QUERY_PARAMETER))

    def test_metadata_keys_follow_nova_pattern(self):
        schema = validation.metadata_with_null
        self.assertIsNone(_message({'ssd': 'true', 'a-b_c:d. e': None},
                                   schema))
        self.assertIn("'bad/key' does not match any of the regexes",
                      _message({'bad/key': 'x'}, schema))
        self.assertIn('is too long', _message({'k': 'v' * 256}, schema))
        self.assertIsNone(_message({'k' * 254 + '\n': 'v'}, schema))
        self.assertIn('is too long', _message({'k' * 255 + '\n': 'v'},
                                              schema))
        self.assertIn("is not of type 'string', 'null'",
                      _message({'k': 1}, schema))


class TestLegacyV2(base.BaseTestCase):
    """/v2 drops the keys a schema does not know, at every level."""

    SCHEMA = _object(aggregate=_object(name=validation.name_string),
                     metadata=validation.metadata_with_null)

    def _body(self, document, legacy_v2=True):
        req = api_request.Request.blank('/', method='POST')
        req.environ[api_request.ENV_APP] = api_request.AppState(
            None, None, [], legacy_v2=legacy_v2)
        req.content_type = 'application/json'
        req.body = jsonutils.dump_as_bytes(document)
        return validation.body(req, self.SCHEMA)

    def test_unknown_keys_are_dropped_at_every_level(self):
        self.assertEqual(
            {'aggregate': {'name': 'a'}},
            self._body({'aggregate': {'name': 'a', 'x': 1}, 'y': 2}))

    def test_keys_by_pattern_are_still_checked(self):
        self.assertRaises(webob.exc.HTTPBadRequest, self._body,
                          {'metadata': {'bad/key': 'x'}})

    def test_v2_1_refuses_unknown_keys(self):
        self.assertRaises(webob.exc.HTTPBadRequest, self._body,
                          {'aggregate': {'name': 'a', 'x': 1}},
                          legacy_v2=False)
