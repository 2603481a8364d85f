"""Database servicegroup driver: heartbeats are rows in the services table."""

from oslo_log import log as logging
from oslo_utils import timeutils

from nova_forcedown.objects import service as service_obj
from nova_forcedown.servicegroup.drivers import base
from nova_forcedown.servicegroup import heartbeat

LOG = logging.getLogger(__name__)


class DbDriver(base.Driver):

    def __init__(self, conf):
        self._report_interval = conf.report_interval
        self._service_down_time = conf.service_down_time

    def join(self, *services):
        """Heartbeat ``services`` every report_interval from one thread.

        Each tick writes them all with report_states: one UPDATE per chunk
        of services, not one per service.
        """
        return heartbeat.Heartbeat(self.report_states, services,
                                   self._report_interval).start()

    @classmethod
    def report_state(cls, service):
        """Heartbeat of one service; ServiceNotFound when its row is gone."""
        service.record_heartbeat()
        cls._warn_forced_down([service])

    @classmethod
    def report_states(cls, services):
        """Heartbeat of many services; returns those whose rows are gone."""
        gone = service_obj.ServiceList.record_heartbeats(services)
        cls._warn_forced_down([service for service in services
                               if service not in gone])
        return gone

    @staticmethod
    def _warn_forced_down(services):
        for service in services:
            if service.forced_down:
                LOG.warning('Service %(binary)s on %(host)s is forced down; '
                            'it keeps reporting but stays down until an '
                            'operator clears forced_down.',
                            {'binary': service.binary, 'host': service.host})

    def is_up(self, service):
        """Down while forced down, else judged by the last heartbeat.

        A service that never reported counts from its creation; a heartbeat
        in the future (clock skew) counts as fresh within the window.
        """
        if service.forced_down:
            return False
        heartbeat_at = service.last_seen_up or service.created_at
        if heartbeat_at is None:
            return False
        elapsed = timeutils.delta_seconds(
            timeutils.normalize_time(heartbeat_at), timeutils.utcnow())
        return abs(elapsed) <= self._service_down_time

    def get_updated_time(self, service):
        return service.updated_at
