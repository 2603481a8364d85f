"""Load the HTTP contract tests in gabbits/, one suite per YAML file."""

import os

from gabbi import driver

from tests.fixtures import gabbi_fixtures

TESTS_DIR = 'gabbits'


def load_tests(loader, tests, pattern):
    """Provide a TestSuite to the discovery process."""
    test_dir = os.path.join(os.path.dirname(__file__), TESTS_DIR)
    stage = gabbi_fixtures.GabbiStage()
    return driver.build_tests(test_dir, loader, host=None,
                              intercept=stage.intercept,
                              fixture_module=stage.fixture_module(),
                              test_loader_name=__name__)
