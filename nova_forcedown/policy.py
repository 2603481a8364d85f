"""oslo.policy enforcer set-up; the rules live in nova_forcedown.policies."""

import argparse
import sys

from oslo_config import cfg
from oslo_policy import policy

from nova_forcedown import exception
from nova_forcedown import policies


def make_enforcer(conf):
    """An oslo.policy Enforcer with the rules in code as defaults.

    Overrides come from ``[oslo_policy] policy_file`` (YAML or JSON) and
    ``policy_dirs``; oslo.policy re-reads them when they change.
    """
    enforcer = policy.Enforcer(conf)
    enforcer.register_defaults(policies.list_rules())
    return enforcer


class Authorizer:
    """Checks a request context against an action; raises or returns bool."""

    def __init__(self, conf):
        self.enforcer = make_enforcer(conf)

    def authorize(self, context, action, target, fatal=True):
        try:
            return self.enforcer.authorize(
                action, target, context, do_raise=fatal,
                exc=exception.PolicyNotAuthorized, action=action)
        except policy.InvalidScope:
            # A token of the wrong scope (e.g. system) is refused like any
            # other failed check, as Nova does: 403, not an error.
            if fatal:
                raise exception.PolicyNotAuthorized(action=action)
            return False


def get_enforcer():
    """Entry point for the oslopolicy-* tools.

    They pass their own arguments on the command line; only the config file
    options are ours to read.
    """
    parser = argparse.ArgumentParser(add_help=False)
    parser.add_argument('--config-file', action='append', default=[])
    parser.add_argument('--config-dir', action='append', default=[])
    known, _ = parser.parse_known_args(sys.argv[1:])
    args = ['--config-file=%s' % f for f in known.config_file]
    args += ['--config-dir=%s' % d for d in known.config_dir]
    conf = cfg.ConfigOpts()
    conf(args, project='nova_forcedown')
    return make_enforcer(conf)
