"""The three-method contract of a servicegroup driver."""

import abc


class Driver(metaclass=abc.ABCMeta):

    @abc.abstractmethod
    def join(self, *services):
        """Start reporting ``services`` alive; return a handle with stop()."""

    @abc.abstractmethod
    def is_up(self, service):
        """Whether ``service`` is alive."""

    @abc.abstractmethod
    def get_updated_time(self, service):
        """When ``service`` last changed, as the driver knows it."""
