"""The install guide says what the code does today."""

import pathlib

from oslotest import base

from nova_forcedown.db import schema

DOCS = pathlib.Path(__file__).resolve().parents[2] / 'doc' / 'source'


class TestInstallGuide(base.BaseTestCase):

    def test_it_shows_the_schema_revision_of_this_release(self):
        guide = (DOCS / 'install' / 'index.rst').read_text()
        self.assertIn('Database is at revision %s.' % schema.head_revision(),
                      guide)
