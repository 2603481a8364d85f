"""The violations found, and the run's figures as text or JSON."""

import collections
import json
import threading

EXAMPLES = 5


class Violations:
    """Counts by kind, the first few examples of each; thread-safe.

    A finding with a ``key`` already seen (the same duplicate copy seen by
    two samples) is counted once.
    """

    def __init__(self):
        self._lock = threading.Lock()
        self.counts = collections.Counter()
        self.examples = collections.defaultdict(list)
        self._keys = set()

    def add(self, kind, detail, key=None):
        with self._lock:
            if key is not None:
                if (kind, key) in self._keys:
                    return
                self._keys.add((kind, key))
            self.counts[kind] += 1
            if len(self.examples[kind]) < EXAMPLES:
                self.examples[kind].append(detail)

    @property
    def total(self):
        with self._lock:
            return sum(self.counts.values())

    def as_dict(self):
        with self._lock:
            return {kind: {'count': count,
                           'examples': list(self.examples[kind])}
                    for kind, count in sorted(self.counts.items())}


def requests_by_status(statuses):
    """{kind: {status: count}} from {(kind, status): count}."""
    table = collections.defaultdict(dict)
    for (kind, status), count in sorted(statuses.items()):
        table[kind][status] = count
    return dict(table)


def text(figures):
    """The figures as lines for a person."""
    lines = ['fault injection: %(backend)s, %(hosts)d hosts x %(instances)d '
             'servers, %(clients)d clients, %(duration)s s, seed %(seed)s, '
             'servicegroup %(servicegroup)s, tasks by %(tasks)s' % figures]
    lines.append('requests: %d' % sum(
        sum(row.values()) for row in figures['requests'].values()))
    for kind, row in figures['requests'].items():
        lines.append('  %-18s %s' % (kind, ', '.join(
            '%s: %d' % item for item in sorted(row.items()))))
    lines.append('evacuations accepted (200) by microversion: %s' % (
        _items(figures['evacuations_accepted'])))
    lines.append('creates accepted (202) by where the server went: %s; '
                 'judged against a forced-down host: %d' % (
                     _items(figures['creates_accepted']),
                     figures['creates_judged']))
    lines.append('deletes by status: %s' % _items(figures['deletes_answered']))
    lines.append('refusals (4xx), most frequent first:')
    lines.extend('  %6d  %s' % (count, what) for what, count in
                 list(figures['refusals'].items())[:12])
    lines.append('evacuation migrations by status: %s' % (
        _items(figures['final']['migrations'])))
    lines.append('faults: %s' % _items(figures['faults']))
    lines.append('invariant checks: %d; servers %d (created %d, deleted '
                 '%d, never placed %d), running where placed %d, by '
                 'vm_state: %s' % (
                     figures['checks'], figures['final']['servers'],
                     figures['final']['servers_created'],
                     figures['final']['servers_deleted'],
                     figures['final']['servers_unplaced'],
                     figures['final']['servers_running'],
                     _items(figures['final']['servers_by_vm_state'])))
    lines.extend('  not running anywhere: ' + server
                 for server in figures['final']['servers_absent'])
    lines.append('violations: %d' % figures['violation_count'])
    for kind, found in figures['violations'].items():
        lines.append('  %s: %d' % (kind, found['count']))
        lines.extend('    - ' + example for example in found['examples'])
    return '\n'.join(lines)


def _items(mapping):
    return ', '.join('%s: %s' % item for item in sorted(
        mapping.items(), key=lambda item: str(item[0]))) or 'none'


def dump(figures):
    return json.dumps(figures, indent=2, sort_keys=True)
