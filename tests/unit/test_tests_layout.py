"""The tests show the house: where each kind of test and helper lives.

tests/functional holds five packages (api, db, cmd, e2e, faults), helpers
live in tests/fixtures only, and no test imports tools/: a tool is tested
by running it as a program, as its users do. Beside unit, functional and
fixtures, the top level holds realnova: the end-to-end tests against a
real OpenStack Nova cloud, which its own tox environment runs (a cloud
per class takes 1.5 GB and a minute to start), outside functional's test
path so that functional's three workers never start one.
"""

import ast
import pathlib

from oslotest import base

TESTS = pathlib.Path(__file__).resolve().parent.parent
FUNCTIONAL_PACKAGES = {'api', 'db', 'cmd', 'e2e', 'faults'}
TOP_LEVEL_PACKAGES = {'unit', 'functional', 'fixtures', 'realnova'}


def _modules():
    return sorted(TESTS.rglob('*.py'))


def _imported_names(path):
    tree = ast.parse(path.read_text(), str(path))
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            yield from (alias.name for alias in node.names)
        elif isinstance(node, ast.ImportFrom) and node.module:
            yield node.module


class TestTestsLayout(base.BaseTestCase):

    def test_no_test_imports_tools(self):
        importers = [str(path.relative_to(TESTS)) for path in _modules()
                     if any(name == 'tools' or name.startswith('tools.')
                            for name in _imported_names(path))]
        self.assertEqual([], importers)

    def test_top_level_holds_only_its_packages(self):
        entries = {entry.name for entry in TESTS.iterdir()
                   if entry.name != '__pycache__'}
        self.assertEqual(TOP_LEVEL_PACKAGES | {'__init__.py'}, entries)
        for name in TOP_LEVEL_PACKAGES:
            self.assertTrue((TESTS / name / '__init__.py').is_file(), name)

    def test_functional_holds_only_the_five_packages(self):
        functional = TESTS / 'functional'
        entries = {entry.name for entry in functional.iterdir()
                   if entry.name != '__pycache__'}
        self.assertEqual(FUNCTIONAL_PACKAGES | {'__init__.py'}, entries)
        for name in FUNCTIONAL_PACKAGES:
            self.assertTrue((functional / name / '__init__.py').is_file(),
                            name)

    def test_helpers_only_in_fixtures(self):
        fixtures = TESTS / 'fixtures'
        helpers = [str(path.relative_to(TESTS)) for path in _modules()
                   if fixtures not in path.parents and
                   path.name != '__init__.py' and
                   not path.name.startswith('test_')]
        self.assertEqual([], helpers)
        self.assertTrue((fixtures / '__init__.py').is_file())
