"""Open the built documentation in headless Chromium: no script error, and
a screenshot of each page to look at.

Build the docs first (``tox -e docs``), then run from the checkout::

    python tools/check_docs_in_browser.py [--html doc/build/html]

Debian's ``chromium`` package provides the browser (``apt-get install
chromium``). Each page is loaded with its scripts run (os-api-ref's
expand buttons and microversion selector need jQuery and Bootstrap from
the theme); a JavaScript error the page logs, such as ``$ is not
defined``, is printed and the script exits 1. Screenshots go to
``doc/build/screenshots/``.
"""

import argparse
import os
import re
import shutil
import subprocess
import sys
import tempfile

PAGES = ('index.html', 'install/index.html', 'admin/fencing.html',
         'admin/instance-ha-pacemaker.html', 'configuration/index.html',
         'api/os-services.html', 'api/os-hypervisors.html',
         'api/servers.html', 'api/flavors.html')
# How Chromium logs an uncaught error of a page's script.
_SCRIPT_ERROR = re.compile(r'INFO:CONSOLE.*"(Uncaught [^"]*)", source: (\S+)')
WINDOW = '1280,1600'


def _chromium():
    for name in ('chromium', 'chromium-browser', 'google-chrome'):
        path = shutil.which(name)
        if path:
            return path
    sys.exit('check_docs_in_browser: no Chromium found: apt-get install '
             'chromium')


def _run(browser, *arguments):
    # A profile of its own: a user's running browser is left alone.
    with tempfile.TemporaryDirectory() as profile:
        return subprocess.run(
            [browser, '--headless', '--no-sandbox', '--disable-gpu',
             '--user-data-dir=' + profile, '--window-size=' + WINDOW,
             '--virtual-time-budget=3000', *arguments],
            capture_output=True, text=True, timeout=120)


def script_errors(browser, url):
    """The uncaught script errors the page at ``url`` logs as it loads."""
    result = _run(browser, '--enable-logging=stderr', '--v=0',
                  '--dump-dom', url)
    return ['%s (%s)' % match.groups()
            for match in _SCRIPT_ERROR.finditer(result.stderr)]


def screenshot(browser, url, path):
    _run(browser, '--screenshot=' + path, url)


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument('--html', default=os.path.join('doc', 'build',
                                                       'html'))
    parser.add_argument('--screenshots', default=os.path.join(
        'doc', 'build', 'screenshots'))
    args = parser.parse_args(argv)
    browser = _chromium()
    os.makedirs(args.screenshots, exist_ok=True)
    problems = 0
    for page in PAGES:
        path = os.path.abspath(os.path.join(args.html, page))
        if not os.path.exists(path):
            print('%s: not built' % page)
            problems += 1
            continue
        url = 'file://' + path
        for error in script_errors(browser, url):
            print('%s: %s' % (page, error))
            problems += 1
        shot = os.path.join(args.screenshots,
                            page.replace('/', '-').replace('.html', '.png'))
        screenshot(browser, url, shot)
    print('%d page(s) checked, %d problem(s); screenshots in %s'
          % (len(PAGES), problems, args.screenshots))
    return 1 if problems else 0


if __name__ == '__main__':
    sys.exit(main())
