"""The recovery half of instance HA, replayed against the real processes.

What Masakari's host-failure recovery and Pacemaker's fence_evacuate send
(../shared/nova-behaviour-recovery.md, sections 6.1 and 6.2), in their
order and through python-novaclient at their microversions, against the
real API server and fake-driver agents: the failed host's agent is
stopped, the reserved host's runs and rebuilds what is evacuated to it.
Then the failed host is repaired: its agent comes back, removes what was
evacuated away and makes nothing again, and the host is unfenced.
"""

from novaclient import exceptions as nova_exceptions

from tests.functional import commands
from tests.functional import test_end_to_end

FAILED = 'failed-1'
RESERVED = 'reserved-1'
OWNER = '0123456789abcdef0123456789abcdef'
MASAKARI_REASON = 'Masakari detected host failed.'


def _settled_on(server, host):
    """Masakari's wait: on another hypervisor, with no task left."""
    return (getattr(server, 'OS-EXT-SRV-ATTR:hypervisor_hostname'),
            getattr(server, 'OS-EXT-STS:task_state')) == (host, None)


def _is_true(text):
    """fence_evacuate's reading of the evacuable extra spec."""
    return text.lower() == 'true'


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

    def assert_repaired_host_duplicates_nothing(self, nova):
        """The failed host's agent returns, the host is unfenced."""
        agent = self.start_agent(
            '--driver', 'fake', '--hosts', '1', '--instances', '4',
            '--host-prefix', 'failed-', '--flavor', 'ha.small',
            '--project-id', OWNER)
        self.assertTrue(agent.wait_for_log('Removed 4 server(s) evacuated'),
                        agent.log())
        fencer = self.nova('2.11')
        fencer.services.force_down(FAILED, 'nova-compute', False)
        fencer.services.enable(FAILED, 'nova-compute')
        self.assertEqual(4, len(self.database.query(
            'SELECT id FROM instances')))
        self.assertEqual({'completed'}, {
            migration.status for migration in
            self.nova('2.59').migrations.list()})
        # Up at the agent's next heartbeat, now that it is no longer
        # forced down.
        self.assertTrue(commands.wait_until(lambda: [
            (service.state, service.status) for service in
            fencer.services.list(host=FAILED, binary='nova-compute')] ==
            [('up', 'enabled')]), agent.log())


class TestMasakariHostFailure(RecoveryTestCase):
    """Masakari's reserved_host recovery, at 2.53.

    masakari/engine/drivers/taskflow/host_failure.py, with
    add_reserved_host_to_aggregate.
    """

    def test_up_to_evacuation(self):
        nova = self.nova('2.53')

        # Pre task: disable the failed host's compute service, then wait
        # (Masakari sleeps 180 s): it never forces the service down, so
        # evacuation waits for the heartbeat to be stale (3 s here).
        [service] = nova.services.list(host=FAILED, binary='nova-compute')
        nova.services.disable_log_reason(service.id, MASAKARI_REASON)
        self.assertTrue(commands.wait_until(lambda: nova.services.list(
            host=FAILED, binary='nova-compute')[0].state == 'down'))
        # Prepare: the failed host's servers, one page.
        servers = nova.servers.list(
            search_opts={'host': FAILED, 'all_tenants': True})
        # The reserved host joins the failed host's aggregates, then is
        # enabled (409s are tolerated: it may be there already).
        for aggregate in nova.aggregates.list():
            if FAILED in aggregate.hosts:
                nova.aggregates.add_host(aggregate.id, RESERVED)
                self.assertRaises(nova_exceptions.Conflict,
                                  nova.aggregates.add_host, aggregate.id,
                                  RESERVED)
        [reserved] = nova.services.list(host=RESERVED, binary='nova-compute')
        nova.services.enable(reserved.id)
        # Per instance: read twice, lock unless locked, reset a busy or
        # odd one to error.
        original = {}
        for server in servers:
            nova.servers.get(server.id)
            server = nova.servers.get(server.id)
            original[server.id] = (getattr(server, 'OS-EXT-STS:vm_state'),
                                   getattr(server, 'OS-EXT-STS:task_state'))
            if not server.locked:
                nova.servers.lock(server.id)
            vm_state, task_state = original[server.id]
            if vm_state not in ('active', 'error', 'stopped') or task_state:
                nova.servers.reset_state(server.id, 'error')
                nova.servers.get(server.id)

        # Evacuate to the reserved host, then wait for each to be there.
        for server in servers:
            nova.servers.evacuate(server.id, host=RESERVED)
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
        self.assert_repaired_host_duplicates_nothing(nova)


class TestMasakariAutoRecovery(RecoveryTestCase):
    """Masakari's auto recovery, at 2.53.

    No host named: the scheduler picks. Masakari unlocks what it locked
    once each server is there.
    """

    def test_evacuated_where_the_scheduler_says(self):
        nova = self.nova('2.53')
        [service] = nova.services.list(host=FAILED, binary='nova-compute')
        nova.services.disable_log_reason(service.id, MASAKARI_REASON)
        self.assertTrue(commands.wait_until(lambda: nova.services.list(
            host=FAILED, binary='nova-compute')[0].state == 'down'))
        servers = nova.servers.list(
            search_opts={'host': FAILED, 'all_tenants': True})
        locked_by_masakari = []
        for server in servers:
            server = nova.servers.get(server.id)
            if not server.locked:
                nova.servers.lock(server.id)
                locked_by_masakari.append(server.id)
            if getattr(server, 'OS-EXT-STS:task_state'):
                nova.servers.reset_state(server.id, 'error')
            nova.servers.evacuate(server.id)
        for server in servers:
            self.assertTrue(commands.wait_until(
                lambda: _settled_on(nova.servers.get(server.id), RESERVED)))
        for uuid in locked_by_masakari:
            nova.servers.unlock(uuid)

        self.assertEqual([self.locked.id], [
            server.id for server in nova.servers.list(
                search_opts={'host': RESERVED, 'all_tenants': True})
            if server.locked])
        self.assertEqual(4, len(nova.servers.list(
            search_opts={'host': RESERVED, 'all_tenants': True})))
        self.assert_repaired_host_duplicates_nothing(nova)


class TestFenceEvacuate(RecoveryTestCase):
    """fence_evacuate's action off, at 2.11.

    fence-agents' agents/evacuate/fence_evacuate.py, once fence_compute
    fenced the host.
    """

    def test_up_to_evacuation(self):
        fencer = self.nova('2.11')
        fencer.services.force_down(FAILED, 'nova-compute', True)
        fencer.services.disable(FAILED, 'nova-compute')

        nova = self.nova('2.11')
        nova.hypervisors.list()
        [service] = nova.services.list(host=FAILED, binary='nova-compute')
        self.assertEqual(('down', 'disabled'), (service.state, service.status))
        # (fence_evacuate asks the image service for images tagged
        # evacuable here; there is none in this test.)
        evacuable = [flavor.id for flavor in nova.flavors.list(is_public=None)
                     if _is_true(flavor.get_keys().get('evacuable', ''))]
        servers = nova.servers.list(
            search_opts={'host': FAILED, 'all_tenants': 1})

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
        refused = []
        for server in servers:
            try:
                nova.servers.evacuate(server, on_shared_storage=True)
            except nova_exceptions.Conflict:
                refused.append(server.id)
        self.assertEqual([self.busy.id], refused)
        nova.servers.reset_state(self.busy, 'active')
        response, _ = nova.servers.evacuate(self.busy, on_shared_storage=True)
        self.assertEqual(200, response.status_code)
        self.assertTrue(commands.wait_until(lambda: {
            (getattr(server, 'OS-EXT-SRV-ATTR:host'),
             getattr(server, 'OS-EXT-STS:task_state'))
            for server in self.nova('2.11').servers.list(
                search_opts={'all_tenants': 1})} == {(RESERVED, None)}))
        self.assert_repaired_host_duplicates_nothing(nova)
