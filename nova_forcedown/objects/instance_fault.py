"""Instance faults: what went wrong with a server, recorded as Nova does.

An evacuation that finds no valid host, and a rebuild, stop or start
that the host's driver fails, each record one: code 500, a message of at
most 255 characters and, for a driver's failure, its traceback as
details and the host it failed on. A server view shows the newest while
the server is in error (the API leaves ``details`` of a 500 to admins).
"""

from oslo_utils import timeutils

from nova_forcedown.db import instance_faults as db_faults

FaultRow = db_faults.FaultRow

# Nova's code for a failure of the service, not of the request.
SERVER_ERROR = 500
MESSAGE_LENGTH = 255

NO_VALID_HOST = ('No valid host was found. There are not enough hosts '
                 'available.')


def record(context, instance_uuid, message, details=None, host=None,
           code=SERVER_ERROR):
    """Record a fault of the server, in the open transaction if any."""
    db_faults.fault_create(context, {
        'instance_uuid': instance_uuid, 'code': code,
        'message': message[:MESSAGE_LENGTH], 'details': details,
        'host': host}, timeutils.utcnow())


def message_of(error):
    """A fault's message for ``error``: its text, else its class's name."""
    return str(error) or type(error).__name__


def latest_of(context, instance_uuids):
    """{uuid: FaultRow} of the newest fault of each server; no SQL for none."""
    if not instance_uuids:
        return {}
    return db_faults.faults_latest(context, instance_uuids)
