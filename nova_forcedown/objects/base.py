"""Common base of the project's versioned objects, and what records share.

Service is the one versioned entity (as Nova's, its versions say which
fields a consumer of each version gets); every other entity is read as a
record, a named tuple, since none travels between processes.
"""

import contextlib

from oslo_versionedobjects import base as ovo_base

from nova_forcedown.db import engine as db_engine
from nova_forcedown.db import models

# Largest value of an integer id on every supported database: the API
# refuses larger ones before they reach a query.
MAX_INTEGER_ID = models.MAX_INTEGER_ID


class ObjectRegistry(ovo_base.VersionedObjectRegistry):
    pass


class NovaForcedownObject(ovo_base.VersionedObject):
    OBJ_PROJECT_NAMESPACE = 'nova_forcedown'
    OBJ_SERIAL_NAMESPACE = 'nova_forcedown_object'


class ObjectListBase(ovo_base.ObjectListBase):
    pass


def timestamp(value):
    """A timestamp field as every listing shows it, API and command line.

    Nova's text: microseconds, no zone suffix (UTC implied).
    """
    if value is None:
        return None
    if value.tzinfo is not None:
        value = value.replace(tzinfo=None)
    # isoformat gives the text of strftime('%Y-%m-%dT%H:%M:%S.%f') at a
    # tenth of its cost, which a listing of thousands notices.
    return value.isoformat(timespec='microseconds')


def list_from_db(list_cls, item_cls, context, db_rows):
    items = [item_cls._from_db_object(context, item_cls(), row)
             for row in db_rows]
    result = list_cls(objects=items)
    result._context = context
    result.obj_reset_changes()
    return result


@contextlib.contextmanager
def one_read(context):
    """Every read of the block in one database transaction.

    A request that reads several things (services, then their zones) then
    checks out one connection, pings and ends one transaction, instead of
    one of each per read: on a one-row read that is most of its cost. For
    reads only: a write in the block fails.
    """
    with db_engine.reading(context):
        yield
