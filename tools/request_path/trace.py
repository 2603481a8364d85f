"""Trace a call: the functions of the package it runs, as files and parts.

Only Python functions whose code lies in the ``nova_forcedown`` package
are kept, in the order they are entered; the bodies of modules imported
during the call, and what they call, are left out (an import is not the
request's work). A generator counts each time it resumes, as it runs again.

Each call also keeps its caller: the nearest function of the package on
the stack (a middleware called by webob is called by the middleware
before it). A call *against the layers* is one whose callee's part the
caller's part may not import (``tests/unit/test_layers.py``): a function
handed down and called back up, as a db function calling into objects.
"""

import collections
import os
import sys

import nova_forcedown
from tests.unit import test_layers

PACKAGE_DIR = os.path.dirname(os.path.abspath(nova_forcedown.__file__))
CHECKOUT = os.path.dirname(PACKAGE_DIR)
_MODULE_BODY = '<module>'

Summary = collections.namedtuple(
    'Summary', 'files file_count layer_switches layers against_layers')


class Tracer:
    """``with Tracer() as tracer:`` records ``tracer.calls``.

    Each call is the file of a function of the package, relative to the
    checkout (``nova_forcedown/api/router.py``); ``tracer.callers`` holds
    the file of each one's caller (None when called from outside the
    package). Only this thread is traced.
    """

    def __init__(self):
        self.calls = []
        self.callers = []
        self._files = {}
        self._imports = []

    def __enter__(self):
        sys.setprofile(self._profile)
        return self

    def __exit__(self, *exc_info):
        sys.setprofile(None)

    def _profile(self, frame, event, arg):
        if event == 'call':
            if frame.f_code.co_name == _MODULE_BODY:
                self._imports.append(frame)
            elif not self._imports:
                path = self._file(frame.f_code.co_filename)
                if path is not None:
                    self.calls.append(path)
                    self.callers.append(self._caller(frame.f_back))
        elif event == 'return' and self._imports and (
                self._imports[-1] is frame):
            self._imports.pop()

    def _caller(self, frame):
        """The file of the nearest function of the package from ``frame``."""
        while frame is not None:
            path = self._file(frame.f_code.co_filename)
            if path is not None and frame.f_code.co_name != _MODULE_BODY:
                return path
            frame = frame.f_back
        return None

    def _file(self, filename):
        """``filename`` from the checkout; None outside the package."""
        try:
            return self._files[filename]
        except KeyError:
            path = os.path.abspath(filename)
            inside = path.startswith(PACKAGE_DIR + os.sep)
            found = os.path.relpath(path, CHECKOUT) if inside else None
            self._files[filename] = found
            return found


def part(path):
    """The top-level part of a file: ``nova_forcedown/db/engine.py`` -> ``db``.

    A module of the package itself is its own part (``exception``).
    """
    return os.path.splitext(path.split(os.sep)[1])[0]


def against_layers(calls, callers):
    """The distinct 'caller -> callee' files of calls against the layers."""
    found = []
    for caller, callee in zip(callers, calls):
        if caller is None or part(caller) == part(callee):
            continue
        if part(callee) not in test_layers.MAY_IMPORT.get(part(caller), ()):
            found.append('%s -> %s' % (caller, callee))
    return list(dict.fromkeys(found))


def summarize(calls, callers):
    """The distinct files in first-entered order, their number, the switches.

    A switch is two consecutive calls in different parts; ``layers`` is
    the sequence of parts with repeats folded (one more than the switches).
    A return counts: a function of objects calling three of db in turn
    switches six times.
    """
    files = list(dict.fromkeys(calls))
    layers = []
    for name in map(part, calls):
        if not layers or layers[-1] != name:
            layers.append(name)
    return Summary(files=files, file_count=len(files),
                   layer_switches=max(len(layers) - 1, 0), layers=layers,
                   against_layers=against_layers(calls, callers))
