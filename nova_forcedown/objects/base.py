"""Common base of the project's versioned objects."""

from oslo_versionedobjects import base as ovo_base


class ObjectRegistry(ovo_base.VersionedObjectRegistry):
    pass


class NovaForcedownObject(ovo_base.VersionedObject):
    OBJ_PROJECT_NAMESPACE = 'nova_forcedown'
    OBJ_SERIAL_NAMESPACE = 'nova_forcedown_object'


class ObjectListBase(ovo_base.ObjectListBase):
    pass


def from_db_object(obj, db_obj, fields=None):
    """Copy columns of ``db_obj`` onto ``obj`` and mark it unchanged."""
    for field in fields or obj.fields:
        setattr(obj, field, getattr(db_obj, field))
    obj.obj_reset_changes()
    return obj


def list_from_db(list_cls, item_cls, context, db_rows):
    items = [item_cls._from_db_object(context, item_cls(), row)
             for row in db_rows]
    result = list_cls(objects=items)
    result._context = context
    result.obj_reset_changes()
    return result
