"""Domain errors: a message template and its keyword arguments, no HTTP.

Each error a request can meet derives from one of the categories below
(NotFound, Invalid, Conflict, PreconditionFailed, Forbidden,
DatabaseUnavailable); the API maps
the categories to status codes in one table, ``api.fault.STATUS_OF``. The
rest stop a process at start-up (DatabaseNotMigrated,
DatabaseDriverMissing and DatabaseDriverNotOurs).
"""


class NovaForcedownException(Exception):
    msg_fmt = 'An unknown exception occurred.'

    def __init__(self, message=None, **kwargs):
        self.kwargs = kwargs
        if message is None:
            message = self.msg_fmt % kwargs
        super().__init__(message)

    @property
    def message(self):
        return str(self)


def first_line(exc):
    """The first line of what ``exc`` says, for a one-line message.

    A wrapped database error says it best through the driver's own error:
    the cause of a DatabaseUnavailable, oslo.db's ``inner_exception``, then
    SQLAlchemy's ``orig``. An exception
    with no text gives its class name.
    """
    if isinstance(exc, DatabaseUnavailable) and exc.__cause__ is not None:
        exc = exc.__cause__
    exc = getattr(exc, 'inner_exception', None) or exc
    text = str(getattr(exc, 'orig', None) or exc).strip()
    return text.splitlines()[0] if text else type(exc).__name__


class NotFound(NovaForcedownException):
    msg_fmt = 'Resource could not be found.'


class Invalid(NovaForcedownException):
    msg_fmt = 'Unacceptable parameters.'


class Conflict(NovaForcedownException):
    msg_fmt = 'Conflict.'


class PreconditionFailed(NovaForcedownException):
    """A write made on a condition that no longer holds (If-Match)."""
    msg_fmt = 'Precondition failed.'


class Forbidden(NovaForcedownException):
    msg_fmt = 'Forbidden.'


class PolicyNotAuthorized(Forbidden):
    msg_fmt = "Policy doesn't allow %(action)s to be performed."


class ServiceNotFound(NotFound):
    msg_fmt = 'Service %(service_id)s could not be found.'


class HostBinaryNotFound(NotFound):
    msg_fmt = 'Could not find binary %(binary)s on host %(host)s.'


class HostNotFound(NotFound):
    msg_fmt = "Host '%(host)s' is not mapped to any cell"


class ComputeHostNotFound(NotFound):
    msg_fmt = 'Compute host %(host)s could not be found.'


class ComputeNodeNotFound(NotFound):
    msg_fmt = "Hypervisor with ID '%(id)s' could not be found."


class HypervisorPatternNotFound(NotFound):
    msg_fmt = "No hypervisor matching '%(pattern)s' could be found."


class InstanceNotFound(NotFound):
    msg_fmt = 'Instance %(instance_id)s could not be found.'


class InstanceMappingNotFound(NotFound):
    """A server never known: Nova's words when it has no cell mapping."""
    msg_fmt = 'Instance %(uuid)s has no mapping to a cell.'


class MetadataItemNotFound(NotFound):
    msg_fmt = 'Metadata item was not found'


class MetadataLimitExceeded(Forbidden):
    msg_fmt = 'Maximum number of metadata items exceeds %(allowed)d'


class InstanceIsLocked(Conflict):
    msg_fmt = 'Instance %(instance_uuid)s is locked'


class InstanceNotReady(Conflict):
    msg_fmt = 'Instance %(instance_id)s is not ready'


class InstanceInvalidState(Conflict):
    """An action the server's state does not allow, said as Nova says it.

    With the state that forbids it (``attr``: vm_state or task_state,
    and ``state``); without, for a server that was never launched.
    """

    def __init__(self, message=None, **kwargs):
        if message is None and 'attr' not in kwargs:
            message = ("Instance %(instance_uuid)s is in an invalid state "
                       "for '%(action)s'" % kwargs)
        super().__init__(message, **kwargs)

    msg_fmt = ("Cannot '%(action)s' instance %(instance_uuid)s while it is "
               "in %(attr)s %(state)s")


class InstanceActionNotFound(NotFound):
    msg_fmt = 'Action %(request_id)s not found'


class MigrationMarkerNotFound(Invalid):
    msg_fmt = 'Marker %(marker)s could not be found.'


class ComputeHostNotFoundForEvacuation(NotFound):
    msg_fmt = 'Compute host %(host)s not found.'


class EvacuationTargetIsSource(Invalid):
    msg_fmt = "The target host can't be the same one."


class ComputeServiceInUse(Invalid):
    msg_fmt = 'Compute service of %(host)s is still in use.'


class ForceUpWithEvacuationsLeft(Invalid):
    msg_fmt = ('Unable to force up host %(host)s as `done` evacuation '
               'migration records remain associated with the host. Ensure '
               'the compute service has been restarted, allowing these '
               'records to move to `completed` before retrying this '
               'request.')


class ForceUpWithEvacuationsInProgress(Conflict):
    msg_fmt = ('Unable to force up host %(host)s while %(count)d evacuation '
               'migration(s) away from it are not yet `completed` '
               '(%(states)s): it may still run those servers. Restart its '
               'compute service, which removes them and completes the '
               'migrations, then retry this request.')


class MarkerNotFound(Invalid):
    msg_fmt = 'marker [%(marker)s] not found'


class InvalidRegex(Invalid):
    msg_fmt = ('The database does not accept the regular expression of '
               'the filter: %(patterns)s')


class ForcedDownLimitExceeded(Conflict):
    msg_fmt = ('Forcing %(host)s down would put %(counts)s forced down, '
               'more than [fencing] max_forced_down_fraction %(fraction)s '
               'allows.')


class ZoneChangeLimitExceeded(Conflict):
    msg_fmt = ('%(change)s would leave %(counts)s forced down, more than '
               '[fencing] max_forced_down_fraction %(fraction)s allows.')


class ServiceExists(Conflict):
    msg_fmt = 'Service with host %(host)s binary %(binary)s exists.'


class ServiceHostsInstances(Conflict):
    msg_fmt = ('Unable to delete compute service that is hosting '
               'instances. Migrate or delete the instances first.')


class ServiceHasMigrationsInProgress(Conflict):
    msg_fmt = ('Unable to delete compute service that has in-progress '
               'migrations. Complete the migrations or delete the '
               'instances first.')


class ServiceChanged(PreconditionFailed):
    msg_fmt = ('The service %(service_id)s changed since the entity tag '
               '%(tags)s was read. Read it again before deciding on the '
               'change.')


class ServiceNotCompute(Invalid):
    msg_fmt = ('Updating a %(binary)s service is not supported. Only '
               'nova-compute services can be updated.')


class ComputeServiceUnavailable(Invalid):
    """The host's compute service is down: a bad request, as in Nova."""
    msg_fmt = 'Compute service of %(host)s is unavailable at this time.'


class ComputeHostStillUp(Conflict):
    """A host-wide change of servers asked while their host may run them."""
    msg_fmt = ('Compute service of %(host)s is still up: fence the host and '
               'force its service down before changing the state of its '
               'servers.')


class AggregateNotFound(NotFound):
    msg_fmt = 'Aggregate %(aggregate_id)s could not be found.'


class AggregateHostNotFound(NotFound):
    msg_fmt = 'Aggregate %(aggregate_id)s has no host %(host)s.'


class AggregateNameExists(Conflict):
    msg_fmt = 'Aggregate %(aggregate_name)s already exists.'


class AggregateHostExists(Conflict):
    msg_fmt = 'Aggregate %(aggregate_id)s already has host %(host)s.'


class CannotAddAggregateHost(Conflict):
    msg_fmt = ('Cannot add host to aggregate %(aggregate_id)s. '
               'Reason: %(reason)s.')


class CannotRemoveAggregateHost(Conflict):
    msg_fmt = ('Cannot remove host from aggregate %(aggregate_id)s. '
               'Reason: %(reason)s.')


class CannotDeleteAggregate(Invalid):
    # Nova's text, which says "remove host" for the deletion too.
    msg_fmt = ('Cannot remove host from aggregate %(aggregate_id)s. '
               'Reason: %(reason)s.')


class CannotUpdateAggregate(Invalid):
    msg_fmt = ('Cannot update aggregate %(aggregate_id)s. '
               'Reason: %(reason)s.')


class CannotUpdateAggregateMetadata(Invalid):
    msg_fmt = ('Cannot update metadata of aggregate %(aggregate_id)s. '
               'Reason: %(reason)s.')


class FlavorNotFound(NotFound):
    msg_fmt = 'Flavor %(flavor_id)s could not be found.'


class FlavorExtraSpecsNotFound(NotFound):
    msg_fmt = ('Flavor %(flavor_id)s has no extra specs with key '
               '%(extra_specs_key)s.')


class ExtraSpecInvalid(Invalid):
    """An extra spec Nova validates (from 2.86) and would refuse."""
    msg_fmt = 'Validation failed; %(detail)s'


class FlavorAccessNotFound(NotFound):
    msg_fmt = ('Flavor access not found for %(flavor_id)s / %(project_id)s '
               'combination.')


class FlavorAccessExists(Conflict):
    msg_fmt = ('Flavor access already exists for flavor %(flavor_id)s and '
               'project %(project_id)s combination.')


class FlavorExists(Conflict):
    """Named by Nova after the name; the id's clash has its own text."""
    msg_fmt = 'Flavor with name %(name)s already exists.'


class FlavorIdExists(Conflict):
    msg_fmt = 'Flavor with ID %(flavor_id)s already exists.'


class FlavorExtraSpecUpdateCreateFailed(Conflict):
    msg_fmt = ('Flavor %(id)s extra spec cannot be updated or created after '
               '%(retries)d retries.')


class PolicyFileInvalid(NovaForcedownException):
    """A stop at start-up: the policy file cannot be used."""
    msg_fmt = 'policy file %(path)s cannot be used: %(reason)s'


class DatabaseConnectionUnusable(NovaForcedownException):
    """A stop at start-up: [database] connection cannot be used as written."""


class DatabaseURLInvalid(DatabaseConnectionUnusable):
    msg_fmt = ('[database] connection is not a database URL: write '
               'dialect+driver://user:password@host/database, such as '
               'mysql+pymysql://nova:secret@db.example.com/nova_forcedown '
               'or sqlite:////var/lib/nova_forcedown/nova_forcedown.sqlite')


class DatabaseDialectUnknown(DatabaseConnectionUnusable):
    msg_fmt = ('[database] connection: SQLAlchemy knows no database '
               '%(scheme)s://; write postgresql+psycopg://, '
               'mysql+pymysql:// or sqlite:///')


class DatabaseDriverMissing(DatabaseConnectionUnusable):
    """A stop at start-up: the database URL needs a driver not installed."""
    msg_fmt = ("the %(backend)s driver (Python module %(module)s) is not "
               "installed: pip install 'nova-forcedown[%(extra)s]' (from a "
               "checkout: pip install '.[%(extra)s]')")


class DatabaseDriverNotOurs(DatabaseDriverMissing):
    """A stop at start-up: the URL names a driver the extras do not give."""
    msg_fmt = ("%(scheme)s:// needs the Python module %(module)s, which is "
               "not installed: write %(ours)s:// in [database] connection, "
               "the driver of pip install 'nova-forcedown[%(extra)s]'")


class DatabaseUnavailable(NovaForcedownException):
    msg_fmt = 'The database is unavailable: %(reason)s'


class DatabaseNotMigrated(NovaForcedownException):
    msg_fmt = ('The database at %(url)s is not migrated to the current '
               'schema (%(reason)s): run nova-forcedown-manage db sync.')


class DatabaseNewerThanCode(NovaForcedownException):
    """A newer release migrated the schema: this code cannot run on it."""
    msg_fmt = ('The database at %(url)s is at revision %(revision)s, which '
               'this release of nova-forcedown does not know (its newest '
               'is %(head)s): a newer release migrated it. Upgrade '
               'nova-forcedown here; db sync never takes a schema back.')


class SchemaRevisionRefused(NovaForcedownException):
    msg_fmt = 'Cannot migrate the database to %(revision)s: %(reason)s.'
