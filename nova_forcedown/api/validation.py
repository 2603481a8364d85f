"""Request body and query validation with JSON Schema, as Nova reports it.

Schemas are module constants in ``api/schemas``. Errors are 400 with
Nova's wording: ``Invalid input for field/attribute <field>. Value:
<value>. <reason>``, or just the reason for a top-level error.
"""

import datetime
import re
import unicodedata

import jsonschema
from oslo_serialization import jsonutils
from oslo_utils import strutils
from oslo_utils import timeutils
from oslo_utils import uuidutils
import webob.exc

from nova_forcedown.api import integers
from nova_forcedown.api import request as api_request
from nova_forcedown.objects import base as objects_base

_VALIDATOR = jsonschema.Draft202012Validator

BOOLEAN_VALUES = [
    True, 'True', 'TRUE', 'true', '1', 'ON', 'On', 'on', 'YES', 'Yes', 'yes',
    False, 'False', 'FALSE', 'false', '0', 'OFF', 'Off', 'off', 'NO', 'No',
    'no',
]

# Nova's parameter_types.
boolean = {'type': ['boolean', 'string'], 'enum': BOOLEAN_VALUES}
fqdn = {'type': 'string', 'minLength': 1, 'maxLength': 255,
        'pattern': '^[a-zA-Z0-9-._]*$'}
name_string = {'type': 'string', 'minLength': 1, 'maxLength': 255}
# Names of things this API creates (aggregates): printable text without
# whitespace at either end; on update and at /v2, whitespace at the ends
# is allowed (and stripped by the handler). Zone names refuse ':' too.
name = dict(name_string, format='name')
name_with_leading_trailing_spaces = dict(
    name_string, format='name_with_leading_trailing_spaces')
az_name = dict(name_string, format='az_name')
az_name_with_leading_trailing_spaces = dict(
    name_string, format='az_name_with_leading_trailing_spaces')
uuid = {'type': 'string', 'format': 'uuid'}
description = {'type': ['string', 'null'], 'minLength': 0,
               'maxLength': 255, 'format': 'description'}
metadata_with_null = {
    'type': 'object',
    'patternProperties': {
        '^[a-zA-Z0-9-_:. ]{1,255}$': {'type': ['string', 'null'],
                                      'maxLength': 255},
    },
    'additionalProperties': False,
    # Python's '$' also matches before a final newline, so Nova's pattern
    # lets 255 characters and a newline through, which no key column holds.
    'propertyNames': {'maxLength': 255},
}
# A server's metadata: the same keys, string values only.
metadata = dict(metadata_with_null, patternProperties={
    key: dict(value, type='string')
    for key, value in metadata_with_null['patternProperties'].items()})
non_negative_integer_string = {'type': 'string', 'pattern': '^[0-9]+$'}
single_param = {'type': 'array', 'maxItems': 1}

MALFORMED_BODY = 'Malformed request body'
# Arrays and objects nested deeper than this are refused: Nova's bodies
# nest three levels at most, and a deeper document would only cost stack
# in the parser, the validator and the error message.
MAX_BODY_DEPTH = 32
STRING_RULE = 'must not contain NUL characters or unpaired surrogates.'
BAD_STRING = 'Invalid input for field/attribute %s. A string ' + STRING_RULE
BAD_TOP_LEVEL_STRING = MALFORMED_BODY + ': a string ' + STRING_RULE


def to_bool(value):
    """A validated boolean (JSON or one of the accepted strings) as bool."""
    if isinstance(value, bool):
        return value
    return strutils.bool_from_string(value, strict=True)


class InvalidName(ValueError):
    """A name breaks its format's rule; the text is Nova's message."""

    def __init__(self, rule):
        super().__init__("An invalid 'name' value was provided. The name "
                         "must be: %s" % rule)


def _printable(char):
    """Nova's printable: no control, format or line/paragraph separator.

    Nova builds its name rules from the characters below U+FFFF only, so
    a character beyond them (an emoji) is refused as it is there.
    """
    category = unicodedata.category(char)
    return (ord(char) < 0xFFFF and category[0] != 'C' and
            (category[0] != 'Z' or category == 'Zs'))


def _is_space(char):
    return unicodedata.category(char) == 'Zs'


def _name_check(rule, forbidden='', edge_spaces=False):
    """A format check of names made of printable characters.

    Without ``edge_spaces`` the name may not start or end with a space;
    with it, it needs one character that is not a space. Anything but a
    string passes: its type is the schema's ``type`` to refuse.
    """
    def check(text):
        if not isinstance(text, str) or not text:
            return True
        if any(not _printable(char) or char in forbidden for char in text):
            raise InvalidName(rule)
        if edge_spaces:
            if all(_is_space(char) for char in text):
                raise InvalidName(rule)
        elif _is_space(text[0]) or _is_space(text[-1]):
            raise InvalidName(rule)
        return True
    return check


def _is_description(text):
    """Nova's description rule: printable characters, spaces anywhere."""
    return not isinstance(text, str) or all(_printable(char) for char in text)


def _is_uuid(value):
    return not isinstance(value, str) or uuidutils.is_uuid_like(value)


def _is_regex(value):
    """Nova's rule: a regular expression Python compiles, not empty."""
    if not isinstance(value, str):
        return True
    if not value:
        return False
    try:
        re.compile(value)
    except re.error:
        return False
    return True


# Only the formats above are checked, each as Nova checks it.
FORMAT_CHECKER = jsonschema.FormatChecker(formats=())
for _format, _check in (
        ('name', _name_check(
            'printable characters. Can not start or end with whitespace.')),
        ('name_with_leading_trailing_spaces', _name_check(
            'printable characters with at least one non space character',
            edge_spaces=True)),
        ('az_name', _name_check(
            # Nova's text, with no space after "except :.".
            'printable characters except :.Can not start or end with '
            'whitespace.', forbidden=':')),
        ('az_name_with_leading_trailing_spaces', _name_check(
            'printable characters except :, with at least one non space '
            'character', forbidden=':', edge_spaces=True)),
        ('uuid', _is_uuid)):
    FORMAT_CHECKER.checks(_format, raises=InvalidName)(_check)
FORMAT_CHECKER.checks('description')(_is_description)
FORMAT_CHECKER.checks('regex')(_is_regex)


def _error_message(error, where):
    """Nova's text: a name rule's own message, else the field and why.

    A body error names its innermost field; a query error names its
    parameter (the outermost key, the rest are list positions).
    """
    if isinstance(error.cause, InvalidName):
        return str(error.cause)
    path = list(error.absolute_path)
    if not path:
        return error.message
    field = path[-1] if where == BODY_FIELD else path[0]
    return 'Invalid input for %s %s. Value: %s. %s' % (
        where, field, _value_text(error.instance), error.message)


def _value_text(value):
    if isinstance(value, list) and len(value) == 1:
        value = value[0]
    return value


BODY_FIELD = 'field/attribute'
QUERY_PARAMETER = 'query parameters'


def validate(instance, schema, where=BODY_FIELD):
    """Raise 400 with the first error's Nova message; return ``instance``."""
    error = _first_to_say(
        _VALIDATOR(schema, format_checker=FORMAT_CHECKER)
        .iter_errors(instance))
    if error is not None:
        raise webob.exc.HTTPBadRequest(
            explanation=_error_message(error, where))
    return instance


def _first_to_say(errors):
    """The error Nova reports: the most relevant, as jsonschema ranks them.

    Unlike jsonschema's best_match, it does not descend into the
    alternatives of a oneOf or anyOf: Nova says the value "is not valid
    under any of the given schemas", not why each alternative failed.
    """
    return max(errors, key=jsonschema.exceptions.relevance, default=None)


def json_body(req):
    """The parsed JSON body; None when there is none.

    A body of another content type is 415. A body that is not UTF-8 JSON,
    or nests arrays and objects deeper than MAX_BODY_DEPTH, is 400
    "Malformed request body". A string in it, key or value, with a NUL
    character or an unpaired surrogate (``"\\ud800"``) is 400 too: no
    database stores a lone surrogate, and PostgreSQL refuses a NUL that
    SQLite and MySQL keep, so both are refused here, alike on every backend.
    Other control characters are text like any other, as in Nova.
    """
    raw = api_request.read_body(req)
    if not raw:
        return None
    if req.content_type not in ('application/json', ''):
        raise webob.exc.HTTPUnsupportedMediaType(
            explanation='Unsupported Content-Type')
    try:
        document = jsonutils.loads(raw)
    except (ValueError, RecursionError):
        # RecursionError: the parser's own stack bound, far deeper than
        # MAX_BODY_DEPTH.
        raise webob.exc.HTTPBadRequest(explanation=MALFORMED_BODY)
    _check_document(document)
    return document


def _check_document(document):
    """400 for nesting deeper than MAX_BODY_DEPTH or a forbidden string.

    Walks the document with a stack of its own, never by recursion.
    """
    pending = [(document, 0, ())]
    while pending:
        value, depth, path = pending.pop()
        if isinstance(value, str):
            _check_string(value, path)
            continue
        if isinstance(value, dict):
            items = value.items()
        elif isinstance(value, list):
            items = ((None, item) for item in value)
        else:
            continue
        if depth >= MAX_BODY_DEPTH:
            raise webob.exc.HTTPBadRequest(explanation=MALFORMED_BODY)
        for key, item in items:
            if key is not None:
                _check_string(key, path)
            pending.append((item, depth + 1,
                            path if key is None else path + (key,)))


def _check_string(text, path):
    """400 naming the field at ``path`` unless ``text`` is storable."""
    if _storable(text):
        return
    if path:
        raise webob.exc.HTTPBadRequest(
            explanation=BAD_STRING % '/'.join(path))
    raise webob.exc.HTTPBadRequest(explanation=BAD_TOP_LEVEL_STRING)


def _storable(text):
    """Whether ``text`` has no NUL and no unpaired surrogate."""
    if '\x00' in text:
        return False
    if text.isascii():
        return True
    try:
        text.encode('utf-8')
    except UnicodeEncodeError:
        return False
    return True


def body(req, schema):
    """Validate the request body against ``schema``.

    The legacy /v2 API validates softly: unknown keys are dropped instead
    of refused, as Nova's v2 compatibility mode does.
    """
    return validate_body(req, json_body(req), schema)


def validate_body(req, data, schema):
    """Validate ``data``, a body already read with json_body, as body()."""
    if req.legacy_v2:
        data = _known_keys_only(data, schema)
    return validate(data, schema)


def _known_keys_only(data, schema):
    """``data`` without the keys its schema refuses, at every level.

    Keys of an object that takes them by pattern (metadata) are kept, so
    a bad one is still refused, as in Nova.
    """
    if not isinstance(data, dict) or not isinstance(schema, dict):
        return data
    properties = schema.get('properties', {})
    if (schema.get('additionalProperties', True) is False and
            not schema.get('patternProperties')):
        data = {key: value for key, value in data.items()
                if key in properties}
    return {key: _known_keys_only(value, properties.get(key))
            for key, value in data.items()}


def query(req, schema):
    """Validate the query string as ``{name: [values...]}``.

    Unknown parameters are dropped when the schema allows additional
    properties, and refused (400) when it does not.
    """
    params = {}
    for name, value in req.GET.items():
        params.setdefault(name, []).append(value)
    if schema.get('additionalProperties', True):
        params = {name: values for name, values in params.items()
                  if name in schema['properties']}
    return validate(params, schema, where=QUERY_PARAMETER)


def last(params, name, default=None):
    """The last value of a repeated query parameter, as Nova reads it."""
    values = params.get(name)
    return values[-1] if values else default


def last_values(params):
    """{name: its last value} of every query parameter, as Nova reads them."""
    return {name: values[-1] for name, values in params.items()}


def db_integer(text):
    """``text`` (ASCII digits, as many as sent) as a database integer id.

    None if no row can have it: it is not digits, or it is larger than
    every id.
    """
    if not isinstance(text, str) or not text.isascii() or not text.isdigit():
        return None
    value = integers.read(text)
    return value if value <= objects_base.MAX_INTEGER_ID else None


CHANGES_ORDER = ('The value of changes-since must be less than or equal '
                 'to changes-before.')


def changes_window(last):
    """(changes-since, changes-before) of ``last`` ({name: value}).

    Naive UTC datetimes or None; 400 for a value that is not ISO 8601 or
    a window that ends before it starts.
    """
    since = _timestamp(last, 'changes-since')
    before = _timestamp(last, 'changes-before')
    # Compared as sent, with their offsets: in UTC either may be clamped.
    if since is not None and before is not None and since > before:
        raise webob.exc.HTTPBadRequest(explanation=CHANGES_ORDER)
    return _naive_utc(since), _naive_utc(before)


def _timestamp(last, name):
    """An ISO 8601 parameter as an aware datetime (400 if it is not)."""
    if name not in last:
        return None
    text = last[name]
    try:
        value = timeutils.parse_isotime(text)
    except ValueError:
        raise webob.exc.HTTPBadRequest(explanation=(
            "Invalid input for query parameters %s. Value: %s. '%s' is not "
            "a 'date-time'" % (name, text, text)))
    if value.tzinfo is None:
        value = value.replace(tzinfo=datetime.timezone.utc)
    return value


def _naive_utc(value):
    """``value`` as a naive UTC datetime, clamped to the calendar.

    9999-12-31T23:59:59-23:59 is in year 10000 in UTC, and
    0001-01-01T00:00:00+23:59 in year 0: such an edge of the window is
    the last or the first instant Python has, and matches as the end or
    the start of time does, on every database.
    """
    if value is None:
        return None
    try:
        return value.astimezone(datetime.timezone.utc).replace(tzinfo=None)
    except OverflowError:
        if value.utcoffset() < datetime.timedelta(0):
            return datetime.datetime.max
        return datetime.datetime.min


def action_name(document, known):
    """The action a POST .../action body asks for: its one key.

    400 "Malformed request body" unless the body is an object with
    exactly one key, and "There is no such action" for a key not in
    ``known``, as Nova answers.
    """
    if not isinstance(document, dict) or len(document) != 1:
        raise webob.exc.HTTPBadRequest(explanation=MALFORMED_BODY)
    name = next(iter(document))
    if name not in known:
        raise webob.exc.HTTPBadRequest(
            explanation='There is no such action: %s' % name)
    return name
