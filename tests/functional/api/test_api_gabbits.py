"""Load the HTTP contract tests in gabbits/, one suite per YAML file."""

import os

from gabbi import driver

from tests.functional.api import fixtures

TESTS_DIR = 'gabbits'


def load_tests(loader, tests, pattern):
    """Provide a TestSuite to the discovery process."""
    test_dir = os.path.join(os.path.dirname(__file__), TESTS_DIR)
    return driver.build_tests(test_dir, loader, host=None,
                              intercept=fixtures.setup_app,
                              fixture_module=fixtures,
                              test_loader_name=__name__)
