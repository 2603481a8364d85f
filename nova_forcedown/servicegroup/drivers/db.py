"""Database servicegroup driver: heartbeats are rows in the services table."""

import functools

from oslo_utils import timeutils

from nova_forcedown.objects import service as service_obj
from nova_forcedown.servicegroup.drivers import base
from nova_forcedown.servicegroup import heartbeat


class DbDriver(base.Driver):

    def __init__(self, conf, reads_every=None):
        # reads_every: every read is fresh here, whoever reads.
        self._report_interval = conf.report_interval
        self._service_down_time = conf.service_down_time
        self._log_reminder_interval = conf.log_reminder_interval

    def join(self, *services, along=None, alive=None):
        """Heartbeat ``services`` every report_interval from one thread.

        Each tick writes them all with report_states: one UPDATE per chunk
        of services, not one per service. The loop logs which of them are
        forced down when that changes, not on every tick.
        """
        return heartbeat.Heartbeat(functools.partial(self.report_states,
                                                     along=along), services,
                                   self._report_interval,
                                   self._log_reminder_interval,
                                   alive=alive).start()

    @staticmethod
    def report_state(service):
        """Heartbeat of one service; ServiceNotFound when its row is gone."""
        service.record_heartbeat()

    @staticmethod
    def report_states(services, along=None):
        """Heartbeat of many services; returns those whose rows are gone.

        Each service that is still there gets its stored forced_down and
        disabled back. ``along``: as :meth:`API.join` says.
        """
        return service_obj.ServiceList.record_heartbeats(services, along)

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
