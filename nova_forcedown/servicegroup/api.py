"""Servicegroup facade: liveness of services through a pluggable driver."""

from stevedore import driver as stevedore_driver

DRIVER_NAMESPACE = 'nova_forcedown.servicegroup.drivers'


class API:
    """Thin facade over the driver named by ``[DEFAULT] servicegroup_driver``.

    A forced-down service is down whatever the driver says, so a driver that
    forgets the flag still cannot report such a service up.
    """

    def __init__(self, conf, reads_every=None):
        """``reads_every``: seconds between the caller's liveness reads.

        A driver that shares one read of its backend among callers then
        keeps it for less than that, so each of them sees a fresh one; by
        default it keeps it for what suits many concurrent requests.
        """
        self._driver = stevedore_driver.DriverManager(
            DRIVER_NAMESPACE, conf.servicegroup_driver,
            invoke_on_load=True, invoke_args=(conf,),
            invoke_kwds={} if reads_every is None else
            {'reads_every': reads_every}).driver

    def join(self, *services, along=None, alive=None):
        """Start heartbeating ``services`` from one loop; returns its handle.

        An agent that runs many hosts passes them all, so their heartbeats
        share one thread and reach the database one after another.

        ``along(context)``: the caller's other periodic database work, done
        in the transaction of each database heartbeat; what it returns,
        unless None, is called once that transaction committed. An idle
        agent then costs the database one transaction per heartbeat, not
        one per kind of work.

        ``alive(service)``: whether the host of ``service`` can report now;
        one that cannot (a simulated host switched off) is left out of the
        heartbeats until it can again. None: every service reports.
        """
        return self._driver.join(*services, along=along, alive=alive)

    def service_is_up(self, service):
        if service.forced_down:
            return False
        return self._driver.is_up(service)

    def liveness(self):
        """``service_is_up`` for the many services of one listing.

        The driver reads its backend (if it has one) at most once for all
        of them, so a listing costs a constant number of round trips
        whatever the number of hosts it shows.
        """
        driver_is_up = self._driver.liveness()

        def is_up(service):
            return not service.forced_down and driver_is_up(service)
        return is_up

    def up_of(self, services):
        """Those of ``services`` that are up, with one read of the backend."""
        is_up = self.liveness()
        return [service for service in services if is_up(service)]

    def heartbeating(self, services):
        """Those of ``services`` whose agent heartbeats, forced down or not.

        A forced-down service is down whatever its heartbeats say; this
        says whether it would be up without the flag: its host is back.
        """
        driver_is_up = self._driver.liveness()
        return [service for service in services
                if driver_is_up(service._replace(forced_down=False))]

    def blind_spot(self):
        """Why liveness cannot be trusted now, or None.

        A driver that reads a backend says so while it cannot read it: a
        service then looks down for want of news, not for being dead.
        """
        return self._driver.blind_spot()

    def get_updated_time(self, service):
        return self._driver.get_updated_time(service)
