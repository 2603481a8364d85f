"""The recovery half of instance HA, replayed against the real processes.

What Masakari's host-failure recovery and Pacemaker's fence_compute and
fence_evacuate send (../shared/nova-behaviour-recovery.md, sections 6.1
and 6.2), in their order and through python-novaclient at their
microversions (the replays of tests/fixtures/instance_ha.py), against the
real API server and fake-driver agents: the failed host's agent is
stopped, the reserved host's runs and rebuilds what is evacuated to it.
Then the failed host is repaired: its agent comes back, removes what was
evacuated away and makes nothing again, and the host is unfenced. Each
flow runs twice: with the agents looking for their tasks in the
database, and told of them over RabbitMQ.
"""

from urllib import parse

from novaclient import exceptions as nova_exceptions

from tests.fixtures import commands
from tests.fixtures import instance_ha
from tests.functional.e2e import test_end_to_end
from tests.functional.e2e import test_rpc_tasks

FAILED = 'failed-1'
RESERVED = 'reserved-1'
OWNER = '0123456789abcdef0123456789abcdef'
MASAKARI_REASON = instance_ha.MASAKARI_DISABLE_REASON


def _settled_on(server, host):
    """Masakari's wait: on another hypervisor, with no task left."""
    return (getattr(server, 'OS-EXT-SRV-ATTR:hypervisor_hostname'),
            getattr(server, 'OS-EXT-STS:task_state')) == (host, None)


class CallLog:
    """The requests a keystoneauth session sends: method, path, version."""

    def __init__(self, session):
        self.calls = []
        session.session.hooks['response'].append(self._record)

    def _record(self, response, *args, **kwargs):
        request = response.request
        url = parse.urlsplit(request.url)
        path = url.path.split('/v2.1', 1)[-1]
        if url.query:
            path += '?' + parse.unquote(url.query)
        self.calls.append((request.method, path,
                           request.headers['X-OpenStack-Nova-API-Version'],
                           response.status_code))

    def take(self):
        calls, self.calls = self.calls, []
        return calls


class RecoveryTestCase(test_end_to_end.EndToEndTestCase):
    """A failed host with four servers and a reserved host with none.

    Before the failure one server was stopped and one locked by its
    owner's admin; once the failed host's agent is gone, a stop asked of
    a third stays pending (powering-off), as on a dead Nova compute.
    """

    def setUp(self):
        super().setUp()
        nova = self.nova('2.53')
        flavor = nova.flavors.create('ha.small', 2048, 1, 20)
        flavor.set_keys({'evacuable': 'true'})
        self.failed_agent = self.start_agent(
            '--driver', 'fake', '--hosts', '1', '--instances', '4',
            '--host-prefix', 'failed-', '--flavor', 'ha.small',
            '--project-id', OWNER)
        self.start_agent('--driver', 'fake', '--hosts', '1', '--instances',
                         '0', '--host-prefix', 'reserved-')
        self.assertTrue(commands.wait_until(lambda: len(
            self.database.query('SELECT id FROM instances')) == 4))
        self.assertTrue(commands.wait_until(lambda: len(
            self.database.services(binary='nova-compute')) == 2))
        aggregate = nova.aggregates.create('ha-hosts', None)
        nova.aggregates.add_host(aggregate, FAILED)
        self.servers = sorted(
            nova.servers.list(search_opts={'all_tenants': True,
                                           'host': FAILED}),
            key=lambda server: server.name)
        self.stopped, self.locked, self.busy, self.running = self.servers
        nova.servers.stop(self.stopped)
        self.assertTrue(commands.wait_until(
            lambda: nova.servers.get(self.stopped.id).status == 'SHUTOFF'))
        nova.servers.lock(self.locked)
        self.assertEqual(0, self.failed_agent.stop())
        nova.servers.stop(self.busy)

    def masakari(self, **options):
        """Masakari's host-failure flow, with ``options``, on this API."""
        return instance_ha.MasakariHostFailure(
            lambda: self.nova('2.53'), wait_period_after_service_update=None,
            **options)

    def masakari_pre_task_and_prepare(self, masakari):
        """Masakari's first two tasks; the failed host's servers.

        Pre task: disable the failed host's compute service, then wait
        (Masakari sleeps 180 s): it never forces the service down, so
        evacuation waits for the heartbeat to be stale (3 s here).
        Prepare: the failed host's servers, one page.
        """
        masakari.pre_task(FAILED)
        return masakari.prepare(FAILED)

    def assert_repaired_host_duplicates_nothing(self, nova):
        """The failed host's agent returns, the host is unfenced."""
        agent = self.start_agent(
            '--driver', 'fake', '--hosts', '1', '--instances', '4',
            '--host-prefix', 'failed-', '--flavor', 'ha.small',
            '--project-id', OWNER)
        self.assertTrue(agent.wait_for_log(
            'Removed 4 server(s) no longer on this agent'), agent.log())
        self.unfence()
        self.assertEqual(4, len(self.database.query(
            'SELECT id FROM instances')))
        self.assertEqual({'completed'}, {
            migration.status for migration in
            self.nova('2.59').migrations.list()})
        # Up at the agent's next heartbeat, now that it is no longer
        # forced down.
        fencer = instance_ha.FenceCompute(self.nova('2.11'))
        self.assertTrue(commands.wait_until(
            lambda: fencer.status(FAILED) == 'on'), agent.log())

    def usage_of(self, nova, host):
        """(running_vms, memory_mb_used) of the host's hypervisor."""
        [hypervisor] = nova.hypervisors.search(host, detailed=True)
        return hypervisor.running_vms, hypervisor.memory_mb_used

    def unfence(self):
        """fence_compute's action on, once the host is back in its cluster.

        The agent runs again but the service is still forced down and
        disabled: the fence agent calls it off, so it clears both.
        """
        instance_ha.FenceCompute(self.nova('2.11')).on(FAILED)


class TestMasakariHostFailure(RecoveryTestCase):
    """Masakari's reserved_host recovery, at 2.53.

    masakari/engine/drivers/taskflow/host_failure.py, with
    add_reserved_host_to_aggregate.
    """

    def test_up_to_evacuation(self):
        nova = self.nova('2.53')
        masakari = self.masakari(add_reserved_host_to_aggregate=True)
        servers = self.masakari_pre_task_and_prepare(masakari)
        # The reserved host joins the failed host's aggregates, then is
        # enabled (409s are tolerated: it may be there already).
        masakari.enable_reserved_host(FAILED, RESERVED)
        for aggregate in nova.aggregates.list():
            if FAILED in aggregate.hosts:
                self.assertRaises(nova_exceptions.Conflict,
                                  nova.aggregates.add_host, aggregate.id,
                                  RESERVED)
        # Per instance: read twice, lock unless locked, reset a busy or
        # odd one to error.
        original = {}
        for server in servers:
            move = masakari.prepare_instance(server.id)
            original[server.id] = (
                getattr(move.server, 'OS-EXT-STS:vm_state'),
                getattr(move.server, 'OS-EXT-STS:task_state'))

        # Evacuate to the reserved host, then wait for each to be there.
        for server in servers:
            masakari.evacuate(server.id, RESERVED)
        for server in servers:
            self.assertTrue(commands.wait_until(
                lambda: _settled_on(nova.servers.get(server.id), RESERVED)))

        self.assertEqual({self.stopped.id: ('stopped', None),
                          self.locked.id: ('active', None),
                          self.busy.id: ('active', 'powering-off'),
                          self.running.id: ('active', None)}, original)
        [service] = nova.services.list(host=FAILED, binary='nova-compute')
        self.assertEqual(('disabled', MASAKARI_REASON),
                         (service.status, service.disabled_reason))
        self.assertEqual('enabled', nova.services.list(
            host=RESERVED, binary='nova-compute')[0].status)
        [aggregate] = nova.aggregates.list()
        self.assertEqual({FAILED, RESERVED}, set(aggregate.hosts))
        self.assertEqual([], nova.servers.list(
            search_opts={'host': FAILED, 'all_tenants': True}))
        after = {server.id: server for server in nova.servers.list(
            search_opts={'host': RESERVED, 'all_tenants': True})}
        self.assertEqual({True}, {server.locked for server in after.values()})
        self.assertEqual({self.stopped.id: 'SHUTOFF', self.locked.id: 'ACTIVE',
                          self.busy.id: 'ACTIVE', self.running.id: 'ACTIVE'},
                         {uuid: server.status
                          for uuid, server in after.items()})
        self.assertEqual(['evacuate', 'resetState', 'lock', 'stop'], [
            action.action for action in
            nova.instance_action.list(self.busy.id)])
        # The locked server was not locked twice.
        self.assertEqual(['evacuate', 'lock'], [
            action.action for action in
            nova.instance_action.list(self.locked.id)])
        # The reserved host's hypervisor counts what it now runs.
        self.assertTrue(commands.wait_until(
            lambda: self.usage_of(nova, RESERVED) == (4, 4 * 2048)),
            self.usage_of(nova, RESERVED))
        self.assert_repaired_host_duplicates_nothing(nova)
        self.assertEqual((0, 0), self.usage_of(nova, FAILED))


class TestMasakariAutoRecovery(RecoveryTestCase):
    """Masakari's auto recovery, at 2.53.

    No host named: the scheduler picks. Masakari unlocks what it locked
    once each server is there: its whole evacuation, three servers at a
    time, each followed until it is on another host.
    """

    def test_evacuated_where_the_scheduler_says(self):
        nova = self.nova('2.53')
        masakari = self.masakari()
        servers = self.masakari_pre_task_and_prepare(masakari)
        outcomes = masakari.evacuate_all([server.id for server in servers],
                                         FAILED)
        for server in servers:
            self.assertTrue(commands.wait_until(
                lambda: _settled_on(nova.servers.get(server.id), RESERVED)),
                outcomes)

        self.assertEqual([self.locked.id], [
            server.id for server in nova.servers.list(
                search_opts={'host': RESERVED, 'all_tenants': True})
            if server.locked])
        self.assertEqual(4, len(nova.servers.list(
            search_opts={'host': RESERVED, 'all_tenants': True})))
        self.assert_repaired_host_duplicates_nothing(nova)


class TestPacemakerInstanceHA(RecoveryTestCase):
    """Pacemaker's instance HA: fence_compute, then fence_evacuate.

    fence-agents' agents/compute/fence_compute.py fences the host (its
    actions list, off, status; on once the host is back), then
    agents/evacuate/fence_evacuate.py's action off evacuates it, both
    through novaclient at 2.11. The fence_compute calls are checked one
    by one, with their microversion.
    """

    CONNECT = [('GET', '/os-hypervisors/detail', '2.11', 200),
               ('GET', '/os-services?binary=nova-compute', '2.11', 200)]
    READ_PLUG = [('GET', '/os-services?host=%s&binary=nova-compute' % FAILED,
                  '2.11', 200)]

    def setUp(self):
        super().setUp()
        self.calls = CallLog(self.session)

    def usage_of(self, nova, host):
        """(running_vms, memory_mb_used) of the host's hypervisor."""
        [hypervisor] = nova.hypervisors.search(host, detailed=True)
        return hypervisor.running_vms, hypervisor.memory_mb_used

    def unfence(self):
        self.calls.take()
        super().unfence()
        self.assertEqual(self.CONNECT + self.READ_PLUG + [
            ('PUT', '/os-services/force-down', '2.11', 200),
            ('PUT', '/os-services/enable', '2.11', 200)], self.calls.take())

    def test_fence_compute_then_fence_evacuate(self):
        fencer = instance_ha.FenceCompute(self.nova('2.11'))
        self.assertEqual([FAILED, RESERVED], fencer.plugs())
        # Pacemaker lost the host before Nova's heartbeat window ended.
        self.assertIn(fencer.status(FAILED), ('on', 'failed'))
        fencer.off(FAILED)
        self.assertEqual('off', fencer.status(FAILED))
        self.assertEqual(
            self.CONNECT + self.CONNECT + self.READ_PLUG +
            self.CONNECT + self.READ_PLUG + [
                ('PUT', '/os-services/force-down', '2.11', 200),
                ('PUT', '/os-services/disable', '2.11', 200)] +
            self.CONNECT + self.READ_PLUG, self.calls.take())
        # A second off (Pacemaker retries) changes nothing.
        fencer.off(FAILED)
        self.assertEqual(self.CONNECT + self.READ_PLUG, self.calls.take())

        # fence_evacuate -o off. (It asks the image service for images
        # tagged evacuable first; there is none in this test.)
        nova = self.nova('2.11')
        evacuator = instance_ha.FenceEvacuate(nova, image_service=False)
        evacuator.connect()
        [service] = nova.services.list(host=FAILED, binary='nova-compute')
        self.assertEqual(('down', 'disabled'), (service.state, service.status))
        evacuable = evacuator.evacuable_flavors()
        servers = evacuator.servers(FAILED)

        [ha_flavor] = [flavor for flavor in nova.flavors.list(is_public=None)
                       if flavor.name == 'ha.small']
        self.assertEqual([ha_flavor.id], evacuable)
        self.assertEqual(sorted(server.id for server in self.servers),
                         sorted(server.id for server in servers))
        self.assertEqual({'ha.small'}, {
            server.flavor['original_name'] for server in
            self.nova('2.47').servers.list(
                search_opts={'host': FAILED, 'all_tenants': 1})})
        self.assertEqual({'DOWN'}, {
            server.host_status for server in self.nova('2.16').servers.list(
                search_opts={'host': FAILED, 'all_tenants': 1})})

        # Evacuate each: 200, or the agent logs the failure, goes on and
        # exits 1. The server whose stop waits for the dead host is busy
        # (409, as in Nova); its operator resets it and evacuates it.
        _, refused = evacuator.evacuate(
            evacuator.evacuable(servers, evacuable, []))
        self.assertEqual([self.busy.id], list(refused))
        self.assertIn('409', refused[self.busy.id])
        nova.servers.reset_state(self.busy, 'active')
        response, _ = nova.servers.evacuate(self.busy, on_shared_storage=True)
        self.assertEqual(200, response.status_code)
        self.assertTrue(commands.wait_until(lambda: {
            (getattr(server, 'OS-EXT-SRV-ATTR:host'),
             getattr(server, 'OS-EXT-STS:task_state'))
            for server in self.nova('2.11').servers.list(
                search_opts={'all_tenants': 1})} == {(RESERVED, None)}))
        self.assert_repaired_host_duplicates_nothing(nova)


class TestMasakariHostFailureOverRPC(test_rpc_tasks.OverRPC,
                                     TestMasakariHostFailure):
    """The same, the API casting to the agents over RabbitMQ."""


class TestMasakariAutoRecoveryOverRPC(test_rpc_tasks.OverRPC,
                                      TestMasakariAutoRecovery):
    """The same, the API casting to the agents over RabbitMQ."""


class TestPacemakerInstanceHAOverRPC(test_rpc_tasks.OverRPC,
                                     TestPacemakerInstanceHA):
    """The same, the API casting to the agents over RabbitMQ."""
