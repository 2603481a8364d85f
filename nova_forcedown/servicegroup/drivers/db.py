"""Database servicegroup driver: heartbeats are rows in the services table."""

from oslo_log import log as logging
from oslo_utils import timeutils

from nova_forcedown.servicegroup.drivers import base
from nova_forcedown.servicegroup import heartbeat

LOG = logging.getLogger(__name__)


class DbDriver(base.Driver):

    def __init__(self, conf):
        self._report_interval = conf.report_interval
        self._service_down_time = conf.service_down_time

    def join(self, *services):
        """Heartbeat ``services`` every report_interval from one thread."""
        return heartbeat.Heartbeat(self.report_state, services,
                                   self._report_interval).start()

    @staticmethod
    def report_state(service):
        service.record_heartbeat()
        if service.forced_down:
            LOG.warning('Service %(binary)s on %(host)s is forced down; it '
                        'keeps reporting but stays down until an operator '
                        'clears forced_down.',
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
