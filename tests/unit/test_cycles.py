"""The collector pause around listings: off while any listing is built."""

import gc
import threading
import weakref

from oslotest import base

from nova_forcedown.api import cycles


class TestPaused(base.BaseTestCase):

    def setUp(self):
        super().setUp()
        self.addCleanup(gc.enable if gc.isenabled() else gc.disable)
        gc.enable()

    def test_off_inside_and_on_again_after(self):
        with cycles.paused():
            self.assertFalse(gc.isenabled())
        self.assertTrue(gc.isenabled())

    def test_on_again_after_a_failure(self):
        with self.assertRaises(RuntimeError):
            with cycles.paused():
                raise RuntimeError('a listing failed')
        self.assertTrue(gc.isenabled())

    def test_stays_off_until_the_last_thread_is_done(self):
        inside, leave = threading.Event(), threading.Event()

        def other_listing():
            with cycles.paused():
                inside.set()
                leave.wait(10)

        other = threading.Thread(target=other_listing)
        other.start()
        self.assertTrue(inside.wait(10))
        with cycles.paused():
            pass
        self.assertFalse(gc.isenabled())
        leave.set()
        other.join(10)
        self.assertTrue(gc.isenabled())

    def test_a_collector_turned_off_by_the_operator_stays_off(self):
        gc.disable()
        with cycles.paused():
            pass
        self.assertFalse(gc.isenabled())

    def test_cycles_made_inside_are_collected_after(self):
        class Node:
            pass

        with cycles.paused():
            node = Node()
            node.me = node
            gone = weakref.ref(node)
            del node
            # Reference counting alone cannot free a cycle.
            self.assertIsNotNone(gone())
        self.assertIsNone(gone())
