"""The generated parts of the architecture page, read from the code.

``.. route-map:: NAMESPACE``
    Every route of the controllers registered as entry points in
    NAMESPACE: method, path, controller module and the handler's name.

``.. layer-table:: MODULE``
    The layer rules of MODULE's ``MAY_IMPORT`` (part -> the parts it may
    import), from the top layer down, with what each part holds: the
    directive's content, a part name on a line of its own and its
    description indented below it. A part without a description, or a
    description of no part, is a warning (an error with ``-W``). MODULE's
    other public constants of names (the exceptions to the rules) follow,
    each with the comment above it in MODULE's source.

``.. request-path:: CALL``
    What ``python -m tools.request_path --json`` reports of CALL
    (``force-down``, ``evacuation``): the files it crosses, their number,
    its layer switches and its calls against the layers. The tool runs
    once per build (a few seconds).
"""

import ast
import importlib
import inspect
import json
import os
import subprocess
import sys
import textwrap

from docutils import nodes
from docutils.statemachine import StringList
from sphinx.errors import ExtensionError
from sphinx.util import docutils as sphinx_docutils
from sphinx.util import logging
from stevedore import extension

LOG = logging.getLogger(__name__)
CHECKOUT = os.path.abspath(os.path.join(os.path.dirname(__file__), '..',
                                        '..', '..'))
METHOD_ORDER = ('GET', 'HEAD', 'POST', 'PUT', 'PATCH', 'DELETE')
TOOL_SECONDS = 300


def _list_table(headers, rows, widths):
    """reStructuredText lines of a list-table."""
    lines = ['.. list-table::', '   :header-rows: 1',
             '   :widths: ' + ' '.join(map(str, widths)), '']
    for row in [headers] + rows:
        first, *others = row
        lines.append('   * - ' + first)
        lines.extend('     - ' + cell for cell in others)
    return lines


class _GeneratedDirective(sphinx_docutils.SphinxDirective):
    """A directive whose output is reStructuredText it builds."""

    def run(self):
        container = nodes.container()
        source = self.get_source_info()[0]
        self.state.nested_parse(StringList(self.lines(), source),
                                self.content_offset, container)
        return container.children

    def lines(self):
        raise NotImplementedError


# ------------------------------------------------------------ route map

def _routes(namespace):
    """(path, method, module, action) of every route, sorted."""
    manager = extension.ExtensionManager(
        namespace, on_load_failure_callback=_raise_load_failure)
    routes = []
    for ext in manager:
        for path, methods in ext.plugin.ROUTES.items():
            for method, handler in methods.items():
                routes.append((path, method, handler.__module__,
                               getattr(handler, '__name__', repr(handler))))
    return sorted(routes, key=lambda route: (
        route[0], METHOD_ORDER.index(route[1])
        if route[1] in METHOD_ORDER else len(METHOD_ORDER), route[1]))


def _raise_load_failure(manager, entrypoint, exc):
    raise ExtensionError('controller %s does not load: %s'
                         % (entrypoint, exc))


class RouteMap(_GeneratedDirective):
    required_arguments = 1

    def lines(self):
        routes = _routes(self.arguments[0])
        package = _common_package([module for _, _, module, _ in routes])
        rows = [[method, '``%s``' % path,
                 '``%s``' % module[len(package):].lstrip('.'),
                 '``%s``' % action]
                for path, method, module, action in routes]
        header = 'Controller (in ``%s``)' % package if package else (
            'Controller')
        return _list_table(['Method', 'Path', header, 'Handler'], rows,
                           [8, 40, 26, 26])


def _common_package(modules):
    """The dotted package every module of ``modules`` is in ('' if none)."""
    packages = [module.split('.')[:-1] for module in modules]
    common = []
    for names in zip(*packages):
        if len(set(names)) > 1:
            break
        common.append(names[0])
    return '.'.join(common)


# ----------------------------------------------------------- layer table

def _heights(rules):
    """{part: height}, to put each part above those it may import.

    0 for a part that may import nothing, else one more than the highest
    part it may import; an import that closes a cycle does not count.
    """
    heights = {}

    def height(part, seen):
        if part in heights:
            return heights[part]
        below = [height(other, seen | {part})
                 for other in rules.get(part, ())
                 if other != part and other not in seen]
        heights[part] = 1 + max(below) if below else 0
        return heights[part]

    for part in rules:
        height(part, frozenset())
    return heights


def _descriptions(content):
    """{part: text} from lines ``part`` followed by indented text."""
    found = {}
    part = None
    for line in content:
        if line and not line[0].isspace():
            part = line.strip()
            found[part] = []
        elif part is not None and line.strip():
            found[part].append(line.strip())
    return {name: ' '.join(text) for name, text in found.items()}


def _names(value):
    """``value`` as text when it is text or a collection of names, else None.

    A dict maps a name to a text or to names (a module to the reason it
    may break a rule, say).
    """
    if isinstance(value, str):
        return value
    if isinstance(value, dict):
        items = []
        for key, names in sorted(value.items()):
            text = _names(names)
            if not isinstance(key, str) or text is None:
                return None
            items.append('``%s``: %s' % (key, text))
        return '; '.join(items) or 'none'
    if isinstance(value, (set, frozenset, list, tuple)) and all(
            isinstance(name, str) for name in value):
        return ', '.join('``%s``' % name for name in sorted(value)) or 'none'
    return None


def _comments(module):
    """{constant: the comment lines just above its assignment}."""
    source = inspect.getsource(module).splitlines()
    comments = {}
    for node in ast.parse('\n'.join(source)).body:
        if not isinstance(node, ast.Assign):
            continue
        above = []
        line = node.lineno - 2
        while line >= 0 and source[line].lstrip().startswith('#'):
            above.insert(0, source[line].lstrip('# ').strip())
            line -= 1
        for target in node.targets:
            if isinstance(target, ast.Name):
                comments[target.id] = ' '.join(above)
    return comments


class LayerTable(_GeneratedDirective):
    required_arguments = 1
    has_content = True

    def lines(self):
        module = importlib.import_module(self.arguments[0])
        rules = module.MAY_IMPORT
        described = _descriptions(self.content)
        for part in sorted(set(rules) - set(described)):
            LOG.warning('layer %s has no description', part,
                        location=self.get_location())
        for part in sorted(set(described) - set(rules)):
            LOG.warning('%s is described but %s has no rule for it', part,
                        self.arguments[0], location=self.get_location())
        heights = _heights(rules)
        importers = {part: sorted(other for other, allowed in rules.items()
                                  if part in allowed and other != part)
                     for part in rules}

        def ordered(parts):
            return sorted(parts, key=lambda part: (-heights.get(part, 0),
                                                   part))

        def names(parts):
            return ', '.join('``%s``' % part for part in ordered(parts)) or (
                'nothing')

        rows = [['``%s``' % part, described.get(part, ''),
                 names(set(rules[part]) - {part}), names(importers[part])]
                for part in ordered(rules)]
        lines = _list_table(['Part', 'What it holds', 'May import',
                             'May be imported by'], rows, [12, 44, 24, 20])
        return lines + [''] + self._exceptions(module)

    @staticmethod
    def _exceptions(module):
        comments = _comments(module)
        lines = []
        for name, value in sorted(vars(module).items()):
            if (name == 'MAY_IMPORT' or name.startswith('_') or
                    not name.isupper()):
                continue
            text = _names(value)
            if text is not None:
                lines += ['``%s``' % name,
                          '   %s %s' % (comments.get(name, ''), text), '']
        if lines:
            lines = ['The rules beyond the table:', ''] + lines
        return lines


# ---------------------------------------------------------- request path

_TOOL_OUTPUT = {}


def _request_paths():
    """{call name: figures} of the tool, run once per build."""
    if not _TOOL_OUTPUT:
        try:
            done = subprocess.run(
                [sys.executable, '-m', 'tools.request_path', '--json'],
                cwd=CHECKOUT, capture_output=True, text=True, check=True,
                timeout=TOOL_SECONDS)
        except (subprocess.CalledProcessError,
                subprocess.TimeoutExpired) as exc:
            raise ExtensionError('python -m tools.request_path failed: %s\n%s'
                                 % (exc, exc.stderr))
        for call in json.loads(done.stdout)['calls']:
            _TOOL_OUTPUT[call['name']] = call
    return _TOOL_OUTPUT


class RequestPath(_GeneratedDirective):
    required_arguments = 1

    def lines(self):
        call = _request_paths().get(self.arguments[0])
        if call is None:
            raise self.error('request_path traces no call named %s'
                             % self.arguments[0])
        lines = ['``%(method)s %(path)s`` at %(microversion)s answered '
                 '%(status)d after crossing **%(file_count)d files** with '
                 '**%(layer_switches)d layer switches**:' % call, '']
        lines += ['#. ``%s``' % path for path in call['files']]
        lines += ['', 'The parts, in the order the call runs through them:',
                  '', '.. code-block:: text', '']
        lines += ['   ' + line for line in textwrap.wrap(
            ' > '.join(call['layers']), 76, break_on_hyphens=False)]
        lines += ['', 'Calls against the layers (a caller whose part may '
                  'not import its callee\'s): **%d**' %
                  len(call['against_layers']), '']
        lines += ['* ``%s``' % edge for edge in call['against_layers']]
        return lines + ['']


def setup(app):
    app.add_directive('route-map', RouteMap)
    app.add_directive('layer-table', LayerTable)
    app.add_directive('request-path', RequestPath)
    return {'parallel_read_safe': True, 'parallel_write_safe': True}
