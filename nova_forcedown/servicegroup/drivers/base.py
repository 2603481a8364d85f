"""The three-method contract of a servicegroup driver."""

import abc


class Driver(metaclass=abc.ABCMeta):

    @abc.abstractmethod
    def join(self, *services, along=None, alive=None):
        """Start reporting ``services`` alive; return a handle with stop().

        ``along``, ``alive``: see
        :meth:`nova_forcedown.servicegroup.api.API.join`.
        """

    @abc.abstractmethod
    def is_up(self, service):
        """Whether ``service`` is alive."""

    @abc.abstractmethod
    def get_updated_time(self, service):
        """When ``service`` last changed, as the driver knows it."""

    def blind_spot(self):
        """Why this driver cannot tell liveness now, or None."""
        return None

    def liveness(self):
        """An ``is_up(service)`` for one request or listing.

        A driver whose is_up asks a remote backend returns one that asks it
        once for all the services it judges; the others are judged from
        their rows alone.
        """
        return self.is_up
