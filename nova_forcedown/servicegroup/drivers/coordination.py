"""tooz servicegroup driver: heartbeats go to a coordination backend.

Every service is a member of one tooz group, with the member id
``<binary>:<host>``; the backend forgets a member that has not heartbeaten
for ``membership_timeout``, which the driver sets to service_down_time. So
a service is up when the backend lists it, or when its database heartbeat
(``services.last_seen_up``) is younger than service_down_time: the agent
still writes that one, at a low rate (``[coordination]
database_report_interval``). The database keeps ``forced_down`` and stays
the judge while the backend is unreachable, has just restarted empty, or
has not yet seen an agent still on the db driver; so no host looks down
for want of the backend, and none looks up longer than service_down_time
after its last heartbeat of either kind.

The group, its member ids and the bounded read of its members are
servicegroup/membership.py's; the heartbeat loop, which the pulse
(``nova-forcedown-pulse``) runs too, is servicegroup/backend_heartbeat.py.
Here is what the driver adds: the database heartbeats beside them, and
the database as the judge when the backend has no answer.
"""

import functools
import time

from oslo_log import log as logging

from nova_forcedown import condition_log
from nova_forcedown.conf import coordination as coordination_conf
from nova_forcedown.servicegroup import backend_heartbeat
from nova_forcedown.servicegroup.drivers import base
from nova_forcedown.servicegroup.drivers import db
from nova_forcedown.servicegroup import heartbeat
from nova_forcedown.servicegroup import membership

LOG = logging.getLogger(__name__)

# The lines of membership.UNREACHABLE, with what the driver does meanwhile.
BACKEND_DOWN = condition_log.Messages(
    level=logging.WARNING,
    started='The coordination backend is unreachable (%(error)s); '
            'liveness follows the database heartbeats until it is back.',
    reminder=membership.UNREACHABLE.reminder,
    ended=membership.UNREACHABLE.ended)


class ToozDriver(base.Driver):

    def __init__(self, conf, clock=time.monotonic, reads_every=None):
        """``reads_every``: see :class:`membership.MembershipReader`."""
        self._conf = conf
        self._database = db.DbDriver(conf)
        self._reader = membership.MembershipReader(
            conf, reads_every=reads_every, clock=clock,
            unreachable=BACKEND_DOWN)

    def join(self, *services, along=None, alive=None):
        """Heartbeat ``services`` to the backend and, rarely, the database.

        Two threads whatever the number of services: one heartbeats every
        service to the backend every report_interval, the other writes
        their database heartbeats every database_report_interval (and
        learns and logs their forced_down). Neither waits for the other,
        so an outage of one store leaves the other's heartbeats running.
        ``along`` rides on the database heartbeats.
        """
        conf = self._conf
        beats = backend_heartbeat.BackendHeartbeat(
            conf, services, alive=alive).start()
        database = heartbeat.Heartbeat(
            functools.partial(db.DbDriver.report_states, along=along),
            services,
            coordination_conf.database_report_interval(conf),
            conf.log_reminder_interval, alive=alive).start()
        return Handle(beats, database)

    def is_up(self, service):
        return self.liveness()(service)

    def liveness(self):
        """An is_up of services that reads the backend at most once.

        It is read when the first service that is not forced down is
        judged, and only if the last read is older than SNAPSHOT_MAX_AGE
        (less for a caller that reads often: ``reads_every``).
        """
        members = []

        def is_up(service):
            if service.forced_down:
                return False
            if not members:
                members.append(self.members())
            if (members[0] is not None and
                    membership.member_id(service) in members[0]):
                return True
            return self._database.is_up(service)
        return is_up

    def blind_spot(self):
        if self.members() is None:
            return 'the coordination backend cannot be read'
        return None

    def get_updated_time(self, service):
        """When the database last heard of the service (a low rate here)."""
        return service.updated_at

    def members(self):
        """Member ids the backend holds alive; None when unknown.

        See :meth:`membership.MembershipReader.members`: a request never
        waits longer than READ_TIMEOUT for the backend, and judges from
        the database meanwhile.
        """
        return self._reader.members()


class Handle:
    """Stops the backend and database heartbeat loops together."""

    def __init__(self, *loops):
        self._loops = loops

    def stop(self, timeout=None):
        for loop in self._loops:
            loop.stop(timeout)
