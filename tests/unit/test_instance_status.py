"""A server's status from its states, and back, as Nova maps them."""

from oslotest import base

from nova_forcedown.objects import instance_status


class TestStatus(base.BaseTestCase):

    def test_default_of_each_vm_state(self):
        for vm_state, shown in (('active', 'ACTIVE'), ('building', 'BUILD'),
                                ('stopped', 'SHUTOFF'), ('error', 'ERROR'),
                                ('paused', 'PAUSED'),
                                ('resized', 'VERIFY_RESIZE'),
                                ('soft-delete', 'SOFT_DELETED'),
                                ('shelved_offloaded', 'SHELVED_OFFLOADED')):
            self.assertEqual(shown, instance_status.status(vm_state, None))

    def test_task_states_that_override(self):
        cases = [('active', 'rebooting', 'REBOOT'),
                 ('active', 'reboot_started_hard', 'HARD_REBOOT'),
                 ('active', 'rebuild_spawning', 'REBUILD'),
                 ('active', 'migrating', 'MIGRATING'),
                 ('stopped', 'resize_prep', 'RESIZE'),
                 ('error', 'rebuilding', 'REBUILD'),
                 ('resized', 'resize_reverting', 'REVERT_RESIZE'),
                 ('paused', 'migrating', 'MIGRATING')]
        for vm_state, task_state, shown in cases:
            self.assertEqual(shown,
                             instance_status.status(vm_state, task_state))

    def test_other_task_states_keep_the_default(self):
        self.assertEqual('ACTIVE',
                         instance_status.status('active', 'powering-off'))
        self.assertEqual('SHUTOFF',
                         instance_status.status('stopped', 'migrating'))

    def test_unknown_or_missing_vm_state(self):
        self.assertEqual('UNKNOWN', instance_status.status(None, None))
        self.assertEqual('UNKNOWN', instance_status.status('weird', None))

    def test_deleted_whatever_the_states(self):
        self.assertEqual('DELETED', instance_status.status(
            'active', None, deleted=True))

    def test_a_default_status_matches_any_task_state(self):
        states = instance_status.states_of({'ERROR'})
        self.assertEqual(['error'], states.vm_states)
        self.assertIsNone(states.task_states)

    def test_an_overriding_status_names_its_task_states(self):
        states = instance_status.states_of({'REBOOT'})
        self.assertEqual(['active'], states.vm_states)
        self.assertEqual(['reboot_pending', 'reboot_started', 'rebooting'],
                         states.task_states)

    def test_rebuild_is_found_in_three_vm_states(self):
        states = instance_status.states_of({'REBUILD'})
        self.assertEqual(['active', 'error', 'stopped'], states.vm_states)

    def test_unknown_status_matches_nothing(self):
        self.assertIsNone(instance_status.states_of({'NOPE'}))
