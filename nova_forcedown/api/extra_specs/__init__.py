"""The flavor extra specs Nova validates from microversion 2.86.

Each module of the ``nova_forcedown.api.extra_specs`` entry points gives
``SPECS``: a name (a regular expression where the name holds a number or
a request group) and the kind of value it takes. A spec whose name is
known has its value checked; an unknown name in a known namespace (the
part before the first ':', as ``hw`` in ``hw:cpu_polcy``) is refused;
any other name (``evacuable``, ``mycloud:tier``) is stored as given, as
Nova does.
"""

import re

from stevedore import extension

from nova_forcedown.api import router
from nova_forcedown import exception

NAMESPACE = 'nova_forcedown.api.extra_specs'


class KnownSpecs:
    def __init__(self, specs):
        self._by_name = dict(specs)
        self._patterns = [(re.compile(name), kind)
                          for name, kind in specs.items()]
        namespaces = sorted({name.split(':', 1)[0]
                             for name in specs if ':' in name})
        self._namespace = re.compile(
            '|'.join('(?:%s)' % namespace for namespace in namespaces))

    def validate(self, name, value):
        """Raise ExtraSpecInvalid where Nova would refuse ``name=value``.

        ``value`` is the string the spec is stored as.
        """
        kind = self._kind_of(name)
        if kind is not None:
            kind.check(value)
        elif ':' in name and self._namespace.fullmatch(name.split(':')[0]):
            raise exception.ExtraSpecInvalid(
                detail="extra spec '%s' does not appear to be a valid "
                       "extra spec." % name)

    def _kind_of(self, name):
        kind = self._by_name.get(name)
        if kind is not None:
            return kind
        for pattern, kind in self._patterns:
            if pattern.fullmatch(name):
                return kind
        return None


def load():
    """The specs every entry point names.

    A module that fails to load stops the service, as a controller does.
    """
    manager = extension.ExtensionManager(
        NAMESPACE, on_load_failure_callback=router.raise_load_failure)
    specs = {}
    for ext in sorted(manager, key=lambda ext: ext.name):
        specs.update(ext.plugin.SPECS)
    return KnownSpecs(specs)
