"""HTTP preconditions (RFC 9110, section 13): the ``If-Match`` of a write.

A client that read a resource's ``ETag`` sends it back in ``If-Match``;
the write then happens only while the resource's tag is one of those it
sent, compared strongly (a weak tag, ``W/"..."``, never matches), and is
refused with 412 otherwise. ``If-Match: *`` asks only that the resource
exists, which a write that finds none already refuses (404).

The header is parsed strictly, not as webob's ``req.if_match`` does (it
takes a value without any quoted tag for one tag, and skips what it does
not understand): a value that is neither ``*`` nor a list of entity tags
is refused with 400, so that a client with a broken header learns it
from the answer rather than from a 412 it would retry forever. Bytes that
are not UTF-8 never get here (api/encoding: 400).
"""

import re

import webob.exc

ANY = '*'

# One token of an If-Match list: whitespace, a comma, or an entity tag
# ([W/] DQUOTE *etagc DQUOTE; etagc is any visible byte but DQUOTE, and
# obs-text, which a WSGI server hands over as latin-1 characters).
_TOKEN = re.compile(r'[ \t]+|,|(?:W/)?"[\x21\x23-\x7e\x80-\xff]*"')

MALFORMED = ('Invalid If-Match header: expected "*" or a comma-separated '
             'list of entity tags such as "a1b2", as an ETag gives them.')


def if_match(req):
    """The entity tags of ``req``'s ``If-Match``: a tuple, quoted, in order.

    None without the header, and for ``*``. 400 when it is malformed.
    """
    value = req.environ.get('HTTP_IF_MATCH')
    if value is None:
        return None
    if value.strip(' \t') == ANY:
        return None
    tags = _entity_tags(value)
    if not tags:
        raise webob.exc.HTTPBadRequest(explanation=MALFORMED)
    return tags


def _entity_tags(value):
    """The tags of the list ``value`` (latin-1 text); None if malformed."""
    tags = []
    position = 0
    after_tag = False
    while position < len(value):
        token = _TOKEN.match(value, position)
        if token is None:
            return None
        text = token.group()
        if text == ',':
            after_tag = False
        elif text.endswith('"'):
            if after_tag:
                return None  # Two tags without a comma between them.
            tags.append(_shown(text))
            after_tag = True
        position = token.end()
    return tuple(tags)


def _shown(tag):
    """``tag`` as the client wrote it: its bytes read as UTF-8."""
    return tag.encode('latin-1').decode('utf-8', 'replace')
