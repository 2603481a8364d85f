"""The soaks' loop: a disruption, then a calm, again until time is up.

A soak subclasses :class:`Disruptions` with one method per kind of
disruption; each lasts :meth:`pause` (3 to 8 s) unless it needs longer,
and 5 to 15 s of calm follow it. ``done`` counts what was done, by name.
"""

import collections
import time


class Disruptions:

    def __init__(self, randomness):
        self.random = randomness
        self.done = collections.Counter()

    def kinds(self):
        """The disruptions to choose from: bound methods."""
        raise NotImplementedError

    def after_each(self):
        """What the soak does after each disruption, before the calm."""

    def pause(self):
        time.sleep(self.random.uniform(3, 8))

    def run(self, seconds):
        kinds = self.kinds()
        deadline = time.monotonic() + seconds
        while time.monotonic() < deadline:
            disruption = self.random.choice(kinds)
            disruption()
            self.done[disruption.__name__] += 1
            self.after_each()
            time.sleep(self.random.uniform(5, 15))

    def said_done(self):
        """What was done, as one line: '3 agent restart, 2 redis blip'."""
        return ', '.join('%d %s' % (count, name.replace('_', ' '))
                         for name, count in sorted(self.done.items()))
