"""``python -m tools.request_path``: options, the calls, the output."""

import argparse
import json
import sys

import tools.request_path
from tools.request_path import calls
from tools.request_path import deployment as deployment_mod


def parse_args(argv):
    parser = argparse.ArgumentParser(
        prog='python -m tools.request_path',
        description=tools.request_path.__doc__.split('\n\n')[0])
    parser.add_argument('--json', action='store_true',
                        help='print the figures as JSON')
    parser.add_argument('--cold', action='store_true',
                        help='trace each call without a warm-up before it')
    return parser.parse_args(argv)


def run(cold):
    """The figures of every traced call, in order."""
    with deployment_mod.Deployment(hosts=calls.HOSTS) as deployment:
        figures = []
        for warm_up, call in calls.plan(deployment):
            if not cold:
                calls.send(deployment, warm_up)
            figures.append(calls.traced(deployment, call))
        return figures


def as_text(figures):
    lines = []
    for call in figures:
        lines.append('%(method)s %(path)s at %(microversion)s: %(status)d, '
                     '%(file_count)d files, %(layer_switches)d layer '
                     'switches' % call)
        lines.extend('  %2d. %s' % (number, path)
                     for number, path in enumerate(call['files'], 1))
        lines.append('  layers: ' + ' > '.join(call['layers']))
        lines.append('  calls against the layers: %d' %
                     len(call['against_layers']))
        lines.extend('    ' + edge for edge in call['against_layers'])
        lines.append('')
    return '\n'.join(lines)


def main(argv=None):
    args = parse_args(sys.argv[1:] if argv is None else argv)
    try:
        figures = run(args.cold)
    except (deployment_mod.RegistrationFailed, calls.CallFailed) as exc:
        print('request_path: %s' % exc, file=sys.stderr)
        return 1
    if args.json:
        print(json.dumps({'warm': not args.cold, 'calls': figures},
                         indent=2))
    else:
        print(as_text(figures))
    return 0
