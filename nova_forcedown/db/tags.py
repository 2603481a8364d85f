"""Query functions for servers' tags, kept as Nova keeps them.

A row per server (its uuid, ``resource_id``) and tag; the pair is the
primary key, so a tag is kept once. Tags have no soft delete: they go
with their server when it is deleted (as Nova's ``instance_destroy``
deletes them), and a purge takes any left with the purged server.

The listing filters are SQL criteria on the servers' uuid column, in the
listing's one statement: ``tags`` (every one of them), ``tags-any`` (at
least one), ``not-tags`` (not every one) and ``not-tags-any`` (none).
"""

import sqlalchemy as sa

from nova_forcedown.db import engine
from nova_forcedown.db import models
from nova_forcedown.db import value_lists

_TAGS = models.Tag.__table__


def add(context, uuid, tags):
    """Insert ``tags`` of server ``uuid``, each once, in the open writer."""
    rows = [{'resource_id': uuid, 'tag': tag} for tag in sorted(set(tags))]
    if rows:
        context.connection.execute(_TAGS.insert(), rows)


def delete(context, uuids):
    """Delete the tags of ``uuids``, in the open writer."""
    context.connection.execute(_TAGS.delete().where(
        _TAGS.c.resource_id.in_(uuids)))


# Built once: every server shown at 2.26 or later reads its tags.
_TAGS_OF = (sa.select(_TAGS.c.resource_id, _TAGS.c.tag)
            .where(value_lists.in_values(_TAGS.c.resource_id, 'uuids'))
            .order_by(_TAGS.c.resource_id, _TAGS.c.tag))


@engine.reader
def tags_of(context, uuids):
    """{uuid: [tag, ...] in order} of the servers ``uuids``, one query.

    A server without tags is not in it; no statement when ``uuids`` is
    empty.
    """
    uuids = sorted(set(uuids))
    if not uuids:
        return {}
    found = {}
    for uuid, tag in context.connection.execute(_TAGS_OF, {'uuids': uuids}):
        found.setdefault(uuid, []).append(tag)
    return found


def _tagged(uuid_column, tags):
    """The server has a tag among ``tags``."""
    return sa.exists().where(_TAGS.c.resource_id == uuid_column,
                             _TAGS.c.tag.in_(sorted(set(tags))))


def _tagged_with_all(uuid_column, tags):
    """The server has every tag of ``tags`` (one probe of the key each)."""
    return sa.and_(*(sa.exists().where(_TAGS.c.resource_id == uuid_column,
                                       _TAGS.c.tag == tag)
                     for tag in sorted(set(tags))))


def criteria(uuid_column, every=None, any_of=None, not_every=None,
             none_of=None):
    """The criteria of the four tag filters (lists of tags; None: unused)."""
    found = []
    if every:
        found.append(_tagged_with_all(uuid_column, every))
    if any_of:
        found.append(_tagged(uuid_column, any_of))
    if not_every:
        found.append(sa.not_(_tagged_with_all(uuid_column, not_every)))
    if none_of:
        found.append(sa.not_(_tagged(uuid_column, none_of)))
    return found
