"""Timing requests and summing latencies up: medians, percentiles, rates."""

import statistics
import time


def timed(function, iterations, budget):
    """Run ``function`` up to ``iterations`` times or ``budget`` seconds."""
    times = []
    deadline = time.monotonic() + budget
    while len(times) < iterations and (len(times) < 3 or
                                       time.monotonic() < deadline):
        start = time.perf_counter()
        function()
        times.append(time.perf_counter() - start)
    return times


def alternately(functions, iterations, budget):
    """[times of the first of ``functions``, of the second...], in turn.

    Up to ``iterations`` rounds or ``budget`` seconds. A ratio of two of
    them compares what each cost in the same moments: this machine's speed
    moves by up to half within minutes, more than most changes measured.
    """
    times = [[] for _ in functions]
    deadline = time.monotonic() + budget
    rounds = 0
    while rounds < iterations and (rounds < 3 or
                                   time.monotonic() < deadline):
        for function, its_times in zip(functions, times):
            start = time.perf_counter()
            function()
            its_times.append(time.perf_counter() - start)
        rounds += 1
    return times


def percentile(values, fraction):
    ordered = sorted(values)
    if not ordered:
        return None
    index = min(len(ordered) - 1, int(round(fraction * (len(ordered) - 1))))
    return ordered[index]


def ms(seconds):
    return None if seconds is None else round(seconds * 1000, 2)


def summary(latencies, failures, statements, elapsed):
    """Requests, failures, SQL statement counts, median, p99 and rate.

    A request that failed on a reset connection counts as a request; one
    that got an error status is already among ``latencies``.
    """
    figures = {
        'requests': len(latencies) + sum(1 for failure in failures
                                         if failure.startswith(('Connection',
                                                                'Remote'))),
        'failures': len(failures),
        'failure_examples': sorted(set(failures))[:3],
        'statements': sorted(s for s in statements if s is not None),
        'median_ms': ms(statistics.median(latencies)) if latencies else None,
        'p99_ms': ms(percentile(latencies, 0.99)),
    }
    if elapsed:
        figures['per_second'] = round(len(latencies) / elapsed, 1)
    return figures
