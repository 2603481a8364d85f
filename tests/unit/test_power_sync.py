"""Which servers the agent's power-state sync stops, as Nova's does."""

from oslotest import base

from nova_forcedown.objects import power_sync

RUNNING, SHUTDOWN, CRASHED, NOSTATE = 1, 4, 6, 0


class TestNeedsStop(base.BaseTestCase):

    def test_an_active_server_that_stopped_by_itself(self):
        self.assertEqual(
            [False, True, True, False],
            [power_sync.needs_stop('active', found)
             for found in (RUNNING, SHUTDOWN, CRASHED, NOSTATE)])

    def test_a_stopped_server_found_running(self):
        self.assertEqual(
            [True, False, False, False],
            [power_sync.needs_stop('stopped', found)
             for found in (RUNNING, SHUTDOWN, CRASHED, NOSTATE)])

    def test_a_server_in_error_is_left_as_it_is(self):
        self.assertEqual(
            [False] * 4,
            [power_sync.needs_stop('error', found)
             for found in (RUNNING, SHUTDOWN, CRASHED, NOSTATE)])
