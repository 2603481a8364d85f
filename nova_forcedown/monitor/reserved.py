"""The reserved hosts of one batch of evacuations, as Masakari uses them.

A reserved host is kept disabled so that it takes no new servers; the
first server evacuated onto it enables it and, with ``[monitor]
add_reserved_host_to_aggregate``, adds it to each host aggregate the
failed host is in, so that what those aggregates give the servers (their
zone, their filters) holds on the reserved host. Each reserved host's
service is read once per batch, and prepared once.
"""

from oslo_log import log as logging

from nova_forcedown.monitor import compute_api
from nova_forcedown.monitor import recovery

LOG = logging.getLogger(__name__)


class ReservedHosts:
    """The reserved hosts as a batch of ``failed_host``'s servers sees them."""

    def __init__(self, conf, api, failed_host):
        self._conf = conf
        self._api = api
        self._failed_host = failed_host
        # host -> its service (None: none), read once.
        self._services = {}
        self._prepared = set()

    def usable(self, host):
        """Whether ``host`` can take servers: up and not forced down."""
        return recovery.reserved_usable(self._service(host))

    def prepare(self, host):
        """Make ``host`` ready for a server, once per batch.

        Raises compute_api.Refused when it cannot be enabled.
        """
        if host in self._prepared:
            return
        service = self._service(host)
        if service is not None and service.disabled:
            self._api.update_service(service.id, {'status': 'enabled'})
            LOG.warning('Reserved host %s enabled for the servers of failed '
                        'host %s.', host, self._failed_host)
        if self._conf.monitor.add_reserved_host_to_aggregate:
            self._join_aggregates(host)
        self._prepared.add(host)

    def _join_aggregates(self, host):
        """Add ``host`` to the failed host's aggregates; a refusal is said.

        The evacuation goes on without it, as Masakari's does not: a
        server kept on a dead host for want of an aggregate is worse.
        """
        for aggregate in self._api.aggregates():
            if (self._failed_host not in aggregate.hosts or
                    host in aggregate.hosts):
                continue
            try:
                self._api.add_to_aggregate(aggregate.id, host)
            except compute_api.Refused as exc:
                LOG.error('Reserved host %s could not be added to aggregate '
                          '%s of failed host %s: %s', host, aggregate.name,
                          self._failed_host, exc)
                continue
            LOG.warning('Reserved host %s added to aggregate %s of failed '
                        'host %s.', host, aggregate.name, self._failed_host)

    def _service(self, host):
        if host not in self._services:
            found = self._api.compute_services(host=host)
            self._services[host] = found[0] if found else None
        return self._services[host]
