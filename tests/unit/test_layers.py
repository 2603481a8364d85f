"""Which layer may import which: the map of the architecture page, kept.

Each top-level part of the package names the parts it may import. A rule
that decides what a host *is* (up, down, enabled, its zone) lives below
the API, so the API, the manage command and the agent answer alike; the
commands and the WSGI entry point use the API only to assemble the app.
Only objects import db: an operation there owns its transaction.
"""

import ast
import pathlib
import subprocess
import sys

from oslotest import base

import nova_forcedown

PACKAGE = pathlib.Path(nova_forcedown.__file__).parent

_FOUNDATION = {'conf', 'exception', 'context', 'condition_log', 'periodic',
               'background', 'messaging'}
_DOMAIN = {'objects', 'servicegroup', 'notifications', 'rpc'} | _FOUNDATION

# part -> the parts it may import (itself always). Only objects reach the
# database; the few exceptions are DATABASE_ITSELF.
MAY_IMPORT = {
    'cmd': {'api', 'compute', 'monitor', 'wsgi', 'policy', 'policies',
            'scheduler'} | _DOMAIN,
    'wsgi': {'api'} | _DOMAIN,
    'api': {'policy', 'policies', 'scheduler'} | _DOMAIN,
    # The agent retries a failed build elsewhere, as Nova's conductor
    # reschedules it: it asks the scheduler where.
    'compute': {'scheduler'} | _DOMAIN,
    # An external system: it speaks the compute API (and reads the
    # hosts' pulses with the servicegroup's reader, MONITOR_READS).
    'monitor': {'servicegroup'} | _FOUNDATION,
    'scheduler': {'objects', 'servicegroup'} | _FOUNDATION,
    'servicegroup': {'objects'} | _FOUNDATION,
    'objects': {'notifications', 'rpc', 'db'} | _FOUNDATION,
    'notifications': _FOUNDATION,
    'rpc': _FOUNDATION,
    'db': _FOUNDATION,
    'policy': {'policies'} | _FOUNDATION,
    'policies': set(),
    'context': {'exception'},
    'condition_log': set(),
    'periodic': set(),
    'background': set(),
    'messaging': set(),
    'conf': set(),
    'exception': set(),
}

# What a command or the WSGI entry point may use of the API: the paste
# pipeline, and the fault bodies the server's own refusals share with it.
API_FOR_ASSEMBLY = {'nova_forcedown.api.deploy', 'nova_forcedown.api.fault'}

# Who may use the database itself, not its rows: the commands and the
# WSGI entry point configure the engine and migrate or check the schema
# (and nova-forcedown-manage db purge prunes old rows), and the API's
# health check asks the engine for a connection. Everything else goes
# through objects.
DATABASE_ITSELF = {
    'nova_forcedown.db.engine': {'cmd', 'api.healthcheck'},
    'nova_forcedown.db.schema': {'cmd', 'wsgi'},
    'nova_forcedown.db.purge': {'cmd.manage'},
}


# What the monitor may use of the servicegroup: the reader of the pulses
# in the coordination backend, which reaches no database.
MONITOR_READS = {'nova_forcedown.servicegroup.membership'}


def _part(module):
    """``nova_forcedown.db.engine`` -> ``db``; the package itself -> ''."""
    parts = module.split('.')
    return parts[1] if len(parts) > 1 else ''


def _imports(path):
    """The nova_forcedown modules (or packages) a source file imports."""
    found = set()
    for node in ast.walk(ast.parse(path.read_bytes())):
        if isinstance(node, ast.Import):
            found.update(alias.name for alias in node.names)
        elif isinstance(node, ast.ImportFrom) and node.module:
            found.update('%s.%s' % (node.module, alias.name)
                         for alias in node.names)
    return {name for name in found if name.startswith('nova_forcedown.')}


def _uses_database_itself(module, imported):
    """Whether ``module`` is one DATABASE_ITSELF lets import ``imported``."""
    within = module.split('.', 1)[1]
    return any(within == allowed or within.startswith(allowed + '.')
               for allowed in DATABASE_ITSELF.get(imported, ()))


def _modules():
    for path in sorted(PACKAGE.rglob('*.py')):
        relative = path.relative_to(PACKAGE.parent).with_suffix('')
        yield '.'.join(relative.parts), path


class TestLayers(base.BaseTestCase):

    def test_every_part_has_a_rule(self):
        parts = {_part(module) for module, _ in _modules()} - {'__init__'}
        self.assertEqual(set(), parts - set(MAY_IMPORT) - {''})

    def test_imports_follow_the_layers(self):
        wrong = []
        for module, path in _modules():
            part = _part(module)
            if part not in MAY_IMPORT:
                continue
            for imported in _imports(path):
                target = _part(imported)
                if (target != part and target not in MAY_IMPORT[part] and
                        not _uses_database_itself(module, imported)):
                    wrong.append('%s imports %s' % (module, imported))
        self.assertEqual([], wrong)

    def test_commands_use_the_api_only_to_assemble_it(self):
        wrong = []
        for module, path in _modules():
            if _part(module) not in ('cmd', 'wsgi'):
                continue
            for imported in _imports(path):
                if (_part(imported) == 'api' and
                        imported not in API_FOR_ASSEMBLY):
                    wrong.append('%s imports %s' % (module, imported))
        self.assertEqual([], wrong)

    def test_the_monitor_reaches_the_cloud_through_its_api_only(self):
        """No objects, no db, no servicegroup but the pulses' reader.

        Also what it imports in turn: importing the monitor's command
        loads no module of objects or db.
        """
        wrong = []
        for module, path in _modules():
            if _part(module) != 'monitor':
                continue
            for imported in _imports(path):
                if (_part(imported) == 'servicegroup' and
                        imported not in MONITOR_READS):
                    wrong.append('%s imports %s' % (module, imported))
        self.assertEqual([], wrong)
        loaded = subprocess.run(
            [sys.executable, '-c', 'import sys; '
             'import nova_forcedown.cmd.monitor; '
             'print(sorted(m for m in sys.modules if m.startswith(('
             '"nova_forcedown.db", "nova_forcedown.objects"))))'],
            capture_output=True, text=True, check=True)
        self.assertEqual('[]', loaded.stdout.strip(), loaded.stderr)
