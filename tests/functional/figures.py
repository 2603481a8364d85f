"""Figures that reliability tests measure, kept with the test's details.

Each test records its figures (requests sent, failures, writes lost,
recovery time) as a ``figures`` detail, shown by ``stestr last
--subunit | subunit2pyunit`` and on failure; when
``NOVA_FORCEDOWN_FIGURES`` names a file, one JSON line per test is
appended to it too, for release notes and closing notes.
"""

import json
import os

from testtools import content

ENVIRONMENT_VARIABLE = 'NOVA_FORCEDOWN_FIGURES'


def record(test, **figures):
    text = json.dumps(dict(test=test.id(), **figures), sort_keys=True)
    test.addDetail('figures', content.text_content(text))
    path = os.environ.get(ENVIRONMENT_VARIABLE)
    if path:
        with open(path, 'a') as output:
            output.write(text + '\n')
