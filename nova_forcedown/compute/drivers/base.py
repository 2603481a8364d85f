"""The contract of a compute agent driver: which hosts, with what resources."""

import abc

DRIVER_NAMESPACE = 'nova_forcedown.compute.drivers'


class DriverError(Exception):
    """A driver could not do what it was asked; the task fails with it."""


class ComputeDriver(metaclass=abc.ABCMeta):
    """Describes the hosts one agent runs and their hypervisors.

    ``conf`` holds the agent's command-line options (``agent_host``,
    ``hosts``, ``host_prefix``, ``instances``) and its configuration files.
    """

    def __init__(self, conf):
        self.conf = conf

    @abc.abstractmethod
    def hosts(self):
        """Names of the hosts this agent runs, in order."""

    @abc.abstractmethod
    def node_resources(self, host):
        """The node columns of ``host``'s hypervisor, ``stats`` included.

        ``stats['uptime']`` is the host's uptime as the ``uptime`` command
        prints it.
        """

    def instances(self, host):
        """Instance fields of the servers running on ``host``."""
        return []

    @property
    def builds_servers(self):
        """Whether instances() builds servers, with use_flavor()'s values."""
        return False

    def use_flavor(self, flavor):
        """Build the servers of instances() with ``flavor``'s values.

        ``flavor`` is the copy an instance keeps (memory_mb, vcpus,
        root_gb, ...). A driver without simulated servers ignores it.
        """

    def power_off(self, instance):
        """Power the server off; return its power_state (4, shutdown).

        ``instance`` is the server's record. A driver without servers
        raises :class:`DriverError`.
        """
        raise DriverError('The %s driver hosts no instances; it cannot '
                          'power off %s.' % (self.conf.driver, instance.uuid))

    def power_on(self, instance):
        """Power the server on; return its power_state (1, running)."""
        raise DriverError('The %s driver hosts no instances; it cannot '
                          'power on %s.' % (self.conf.driver, instance.uuid))

    def rebuild(self, instance, stopped=False):
        """Build an evacuated server on this host; its power_state.

        Powered off after the build when ``stopped`` (4, shutdown), else
        running (1).
        """
        raise DriverError('The %s driver hosts no instances; it cannot '
                          'rebuild %s.' % (self.conf.driver, instance.uuid))

    def spawn(self, instance):
        """Build a new server on its host; (power_state, network_info).

        ``network_info``: the ports the server got, a list of {network,
        version, type, address, mac_address}: none when its system
        metadata's ``requested_networks`` is ``none``.
        """
        raise DriverError('The %s driver hosts no instances; it cannot '
                          'build %s.' % (self.conf.driver, instance.uuid))

    def guests(self, host):
        """{uuid: power_state} of the servers ``host``'s hypervisor runs.

        What the hypervisor itself says, whatever the database holds; a
        driver without servers runs none.
        """
        return {}

    def adopt(self, host, instances):
        """Take the servers the database places on ``host`` at start.

        ``instances`` are the records of the live servers on ``host``
        that are not being rebuilt there. A driver whose hypervisor knows
        its guests ignores them; one that simulates its servers takes
        them as running.
        """

    def destroy(self, host, instance_uuid):
        """Remove the copy ``host`` holds of a server that is not its own.

        A server evacuated away, or whose rebuild here was superseded.
        Its disks on shared storage are kept. A driver without servers
        has nothing to remove.
        """

    def powered(self, host):
        """Whether ``host`` has power: one without does not heartbeat.

        The machine an agent runs on has, while the agent runs; a driver
        simulating hosts says which of them are off.
        """
        return True
