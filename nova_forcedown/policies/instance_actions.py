"""os-instance-actions rules, named as in Nova.

A server's readers list and show its actions; the events' tracebacks and
hosts (and, before 2.51, the events at all), and from 2.84 their
details, are for admins.
"""

from oslo_policy import policy

from nova_forcedown.policies import base

BASE = 'os_compute_api:os-instance-actions:%s'
LIST = BASE % 'list'
SHOW = BASE % 'show'
EVENTS = BASE % 'events'
EVENTS_DETAILS = BASE % 'events:details'

_LIST_PATH = '/servers/{server_id}/os-instance-actions'
_SHOW_PATH = _LIST_PATH + '/{request_id}'


def _rule(name, check_str, description, path):
    return policy.DocumentedRuleDefault(
        name=name, check_str=check_str, description=description,
        operations=[{'method': 'GET', 'path': path}],
        scope_types=['project'])


rules = [
    _rule(LIST, base.PROJECT_READER_OR_ADMIN,
          'List the actions of a server.', _LIST_PATH),
    _rule(SHOW, base.PROJECT_READER_OR_ADMIN,
          'Show an action of a server.', _SHOW_PATH),
    _rule(EVENTS, base.ADMIN,
          "Show an action's events with their tracebacks and, from 2.62, "
          "their hosts (before 2.51, the events at all).", _SHOW_PATH),
    _rule(EVENTS_DETAILS, base.ADMIN,
          "Show the details of an action's events (from 2.84).",
          _SHOW_PATH),
]


def list_rules():
    return rules
