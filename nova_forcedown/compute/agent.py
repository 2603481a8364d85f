"""The compute agent: register hosts through the objects, then heartbeat.

Start-up gets or creates each host's service row (bumping its version, as
Nova's service start does, and leaving forced_down and disabled alone) and,
for nova-compute, its compute node and simulated instances. All services
then heartbeat from one servicegroup loop: each report_interval, one
UPDATE for every 500 of them.
"""

import collections
import threading
import time

from oslo_log import log as logging
from oslo_utils import timeutils
from stevedore import driver as stevedore_driver
from stevedore import exception as stevedore_exc
from stevedore import extension as stevedore_extension

from nova_forcedown.compute.drivers import base as driver_base
from nova_forcedown.compute import manager as compute_manager
from nova_forcedown.compute import power_sync as compute_power_sync
from nova_forcedown.compute import tasks as compute_tasks
from nova_forcedown import condition_log
from nova_forcedown import context as nf_context
from nova_forcedown import exception
from nova_forcedown.objects import aggregate as aggregate_obj
from nova_forcedown.objects import compute_node as node_obj
from nova_forcedown.objects import instance as instance_obj
from nova_forcedown.objects import instance_operations as operations
from nova_forcedown.objects import migration as migration_obj
from nova_forcedown.objects import service as service_obj
from nova_forcedown.rpc import transport as rpc_transport
from nova_forcedown.servicegroup import api as servicegroup_api

LOG = logging.getLogger(__name__)

# Version 1: the first agent; recorded in services.version at start.
SERVICE_VERSION = 1

# Seconds between two refreshes of the nodes' resources (uptime included),
# the period of Nova's update_available_resource task; done by the first
# database heartbeat once they have passed.
RESOURCE_INTERVAL = 60

# The flavor simulated servers are built with unless --flavor names
# another: Nova's classic m1.medium, which a development API creates, the
# size of the fake driver's own.
DEFAULT_FLAVOR = 'm1.medium'

NODES_GONE = condition_log.Messages(
    level=logging.ERROR,
    started=('The compute node %(names)s is gone; it will not be '
             'recreated. Restart the agent to register it again.',
             '%(count)d compute nodes are gone: %(names)s. They will not be '
             'recreated. Restart the agent to register them again.'),
    reminder=('The compute node %(names)s is still gone; restart the agent '
              'to register it again.',
              '%(count)d compute nodes are still gone: %(names)s. Restart '
              'the agent to register them again.'),
    ended=('The compute node %(names)s is back; its resources are updated '
           'again.',
           '%(count)d compute nodes are back: %(names)s. Their resources '
           'are updated again.'))


def load_driver(conf):
    """The compute driver named by ``--driver``.

    An unknown name is an Invalid that lists the installed drivers.
    """
    try:
        return stevedore_driver.DriverManager(
            driver_base.DRIVER_NAMESPACE, conf.driver, invoke_on_load=True,
            invoke_args=(conf,)).driver
    except stevedore_exc.NoMatches:
        installed = stevedore_extension.ExtensionManager(
            driver_base.DRIVER_NAMESPACE).names()
        raise exception.Invalid(
            'unknown driver %r: --driver takes one of %s' % (
                conf.driver, ', '.join(sorted(installed))))


def topic_of(binary):
    """``compute`` for nova-compute, else the binary without ``nova-``."""
    return binary.rpartition('nova-')[2]


def set_changed(obj, values):
    """Set only the fields whose value differs, so save() writes only those."""
    for field, value in values.items():
        value = obj.fields[field].coerce(obj, field, value)
        if not obj.obj_attr_is_set(field) or getattr(obj, field) != value:
            setattr(obj, field, value)


class Agent:

    def __init__(self, conf, driver, clock=time.monotonic):
        self._driver = driver
        self._conf = conf
        self._binary = conf.binary
        self._availability_zone = conf.availability_zone
        self._context = nf_context.get_admin_context()
        self._servicegroup = servicegroup_api.API(conf)
        self._heartbeat = None
        self._tasks = None
        self._listener = None
        self._power_sync = None
        self._rpc_server = None
        self._clock = clock
        self._nodes_gone = condition_log.ConditionLog(
            LOG, NODES_GONE, conf.log_reminder_interval, clock)
        self._resources_at = clock()
        # Rebuilds since the start, and how many the nodes last written
        # counted: the nodes are written at the next heartbeat after one.
        self._rebuilds = 0
        self._rebuilds_written = 0
        self._rebuilds_lock = threading.Lock()
        self.services = []
        self.nodes = []
        # Hosts the driver said were switched off, and its guard.
        self._off = set()
        self._off_lock = threading.Lock()

    @property
    def task_runner(self):
        """The runner of the hosts' tasks once started (nova-compute only)."""
        return self._tasks

    @property
    def is_compute(self):
        return self._binary == service_obj.COMPUTE_BINARY

    def register(self):
        """Get or create every host's service, node and instances."""
        hosts = self._driver.hosts()
        # The agent listens once, as its first host (compute.manager).
        self._rpc_server = hosts[0]
        self.services = [self._register_service(host) for host in hosts]
        if self.is_compute and self._availability_zone:
            aggregate_obj.place_hosts_in_zone(
                self._context, hosts, self._availability_zone)
        if self.is_compute:
            self.clean_up_evacuated(hosts)
            self._register_instances(hosts, self._instance_owner())
            # After the servers: the driver counts them in its usage.
            self.nodes = [self._register_node(service)
                          for service in self.services]
        LOG.info('Registered %(count)d %(binary)s service(s): %(first)s'
                 '%(last)s.', {'count': len(hosts), 'binary': self._binary,
                               'first': hosts[0],
                               'last': ' ... ' + hosts[-1]
                               if len(hosts) > 1 else ''})

    def _register_service(self, host):
        values = {'topic': topic_of(self._binary),
                  'version': SERVICE_VERSION,
                  'rpc_server': self._rpc_server}
        try:
            service = service_obj.Service.get_by_host_and_binary(
                self._context, host, self._binary)
        except exception.HostBinaryNotFound:
            return self._create_service(host, values)
        set_changed(service, values)
        service.save()
        return service

    def _create_service(self, host, values):
        service = service_obj.Service(
            self._context, host=host, binary=self._binary, report_count=0,
            disabled=False, forced_down=False, **values)
        try:
            service.create()
        except exception.ServiceExists:
            # Another agent registered the host in the meantime.
            return service_obj.Service.get_by_host_and_binary(
                self._context, host, self._binary)
        return service

    def _register_node(self, service):
        values = dict(self._driver.node_resources(service.host),
                      service_id=service.id)
        nodes = node_obj.get_all_by_host(self._context, service.host)
        node = next((node for node in nodes
                     if node.hypervisor_hostname == service.host), None)
        if node is None:
            return node_obj.create(
                self._context, host=service.host,
                hypervisor_hostname=service.host, **values)
        return node_obj.save_changed(self._context, node, values)

    def _instance_owner(self):
        """What every server this agent creates shares.

        The owner (``--project-id``, ``--user-id``), the launch time, the
        zone, and, for a driver that builds servers, the flavor named by
        ``--flavor`` when there is one: the driver builds its servers (and
        counts its node's usage) with it, else with its own.
        """
        owner = {'project_id': self._conf.project_id,
                 'user_id': self._conf.user_id,
                 'availability_zone': self._availability_zone,
                 'launched_at': timeutils.utcnow()}
        name = self._conf.flavor if self._driver.builds_servers else None
        found = instance_obj.flavor_copy(self._context, name) if name else None
        if found is not None:
            owner['instance_type_id'], flavor = found
            self._driver.use_flavor(flavor)
        elif name:
            # Only a flavor the operator named is worth a warning.
            LOG.log(logging.INFO if name == DEFAULT_FLAVOR else
                    logging.WARNING,
                    "No flavor is named %s: simulated servers use the fake "
                    "driver's own, fake.small. Create that flavor, or name "
                    "another with --flavor.", name)
        return owner

    def clean_up_evacuated(self, hosts):
        """Remove the copies of servers that are no longer these hosts'.

        As Nova's compute does on start-up, before it reports anything:
        each host's copy of a server evacuated away from it, or whose
        rebuild there failed or was superseded, or that its hypervisor
        runs while the database places it elsewhere, is destroyed (disks
        on shared storage kept); then each open evacuation away from the
        hosts is ``completed``, so the host may be forced up again. No
        server runs on two hosts, and none is lost: a server is only ever
        removed from a host the database does not place it on.
        """
        migrations = migration_obj.to_clean_up(self._context, hosts)
        copies = {(host, uuid) for host in hosts
                  for uuid in self._driver.guests(host)}
        for migration in migrations:
            if migration.source_compute in hosts:
                copies.add((migration.source_compute, migration.instance_uuid))
            if migration.status == migration_obj.FAILED and (
                    migration.dest_compute in hosts):
                copies.add((migration.dest_compute, migration.instance_uuid))
        placed = operations.hosts_of(self._context,
                                     {uuid for _, uuid in copies})
        removed = sorted((host, uuid) for host, uuid in copies
                         if placed.get(uuid) != host)
        for host, uuid in removed:
            self._driver.destroy(host, uuid)
        completed = migration_obj.complete(self._context, migrations)
        if removed or completed:
            LOG.info('Removed %(removed)d server(s) no longer on this '
                     'agent\'s hosts and completed %(completed)d '
                     'evacuation(s) away from them.',
                     {'removed': len(removed), 'completed': len(completed)})

    def _register_instances(self, hosts, owner):
        """Create the servers the driver reports and the database lacks.

        A server is known by its name: one a server has or had (on any
        host; one deleted through the API stays deleted), or one that
        left the hosts by evacuation, is not made again. The driver then
        adopts each host's servers (but those it is to rebuild).
        """
        present = instance_obj.get_by_hosts(self._context, hosts)
        wanted = {host: self._driver.instances(host) for host in hosts}
        known = migration_obj.evacuated_names(self._context, hosts)
        known.update(instance_obj.names_among(
            self._context, [values['display_name']
                            for host_values in wanted.values()
                            for values in host_values]))
        servers = collections.defaultdict(list)
        for instance in present:
            if instance.task_state != operations.REBUILDING:
                servers[instance.host].append(instance)
        for host in hosts:
            for values in wanted[host]:
                if values['display_name'] in known:
                    continue
                servers[host].append(instance_obj.create(
                    self._context, host=host, node=host, **owner, **values))
            self._driver.adopt(host, servers[host])

    def start(self):
        """Heartbeat all services from one thread.

        The tasks of nova-compute hosts are carried out from another,
        told of them by the API's casts when ``[DEFAULT] transport_url``
        is set, else finding them in the database.
        """
        if not self.is_compute:
            self._heartbeat = self._servicegroup.join(*self.services)
            return
        told = rpc_transport.enabled(self._conf)
        hosts = [service.host for service in self.services]
        self._tasks = compute_tasks.TaskRunner(
            self._context, self._driver, hosts, self._conf, self._clock,
            told=told, on_rebuilt=self._rebuilt,
            servicegroup=self._servicegroup)
        interval = self._conf.sync_power_state_interval
        if interval > 0:
            self._power_sync = compute_power_sync.PowerSync(
                self._context, self._driver, hosts, self._has_power,
                interval, self._clock)
        self._heartbeat = self._servicegroup.join(
            *self.services, along=self.with_heartbeat, alive=self.powered)
        self._tasks.start()
        if told:
            self._listener = compute_manager.Listener(
                self._conf, self._rpc_server, self._tasks).start()
        else:
            LOG.info('No [DEFAULT] transport_url: tasks are looked for in '
                     'the database every %s s.', self._conf.task_poll_interval)

    def stop(self, timeout=5):
        if self._listener is not None:
            self._listener.stop()
        if self._power_sync is not None:
            self._power_sync.stop()
        if self._tasks is not None:
            self._tasks.stop(timeout)
        if self._heartbeat is not None:
            self._heartbeat.stop(timeout)

    def powered(self, service):
        """Whether the host of ``service`` has power, so heartbeats.

        A host switched on again boots as after an agent restart: the
        copies of the servers evacuated away from it meanwhile are removed
        and those evacuations completed.
        """
        host = service.host
        on = self._driver.powered(host)
        with self._off_lock:
            changed = on == (host in self._off)
            if on:
                self._off.discard(host)
            else:
                self._off.add(host)
        if changed and not on:
            LOG.warning('Host %s has no power: it runs nothing and no '
                        'longer heartbeats.', host)
        elif changed:
            LOG.info('Host %s has power again: it boots.', host)
            self.clean_up_evacuated([host])
        return on

    def _has_power(self, host):
        with self._off_lock:
            return host not in self._off

    def with_heartbeat(self, context):
        """The agent's other periodic database work, in a heartbeat's.

        Once RESOURCE_INTERVAL has passed, or a server was rebuilt here,
        the nodes' resources are written; told over RPC, the tasks whose
        cast was lost are found (:meth:`TaskRunner.waiting_if_due`); once
        ``sync_power_state_interval`` has passed, the servers whose power
        state disagrees with their host's (:mod:`.power_sync`). All
        in the transaction of the database heartbeat, so an idle agent
        costs the database one transaction per heartbeat. Returns what to
        do once it committed: a transaction rolled back (and retried)
        leaves the work due.
        """
        now = self._clock()
        with self._rebuilds_lock:
            rebuilds = self._rebuilds
        due = (now - self._resources_at >= RESOURCE_INTERVAL or
               rebuilds != self._rebuilds_written)
        gone = self._write_resources() if due else None
        waiting = (self._tasks.waiting_if_due(context)
                   if self._tasks is not None else None)
        syncing = (self._power_sync.out_of_step_if_due(context)
                   if self._power_sync is not None else None)

        def then():
            if gone is not None:
                self._resources_at = now
                self._rebuilds_written = rebuilds
                self._nodes_gone.update(gone)
            if waiting is not None:
                self._tasks.take_waiting(waiting)
            if syncing is not None:
                self._power_sync.take(syncing)
        return then

    def _rebuilt(self):
        """A rebuild changed what a host runs: its usage is written soon."""
        with self._rebuilds_lock:
            self._rebuilds += 1

    def _write_resources(self):
        """Write what changed in each node's resources (uptime at least).

        Returns the names of the nodes whose rows are gone.
        """
        gone = []
        for at, node in enumerate(self.nodes):
            try:
                self.nodes[at] = node_obj.save_changed(
                    self._context, node,
                    self._driver.node_resources(node.host))
            except exception.ComputeNodeNotFound:
                gone.append(node.hypervisor_hostname)
        return gone
