"""oslo.policy enforcer set-up; the rules live in nova_forcedown.policies."""

import argparse
import contextlib
import logging as std_logging
import sys
import time

from oslo_config import cfg
from oslo_policy import _checks
from oslo_policy import policy

from nova_forcedown import exception
from nova_forcedown import policies


# How often, at most, the policy files are looked at for a change.
RELOAD_CHECK_SECONDS = 1.0
# Decisions remembered between two looks at the files; past this many, the
# oldest are forgotten all at once.
MAX_DECISIONS = 4096
# The checks whose answer depends on the rules, the target and the
# credentials alone: never a remote call (``http:``) or a plug-in's.
# (oslo.policy exports only some of their classes.)
_PURE_CHECKS = (_checks.TrueCheck, _checks.FalseCheck, _checks.RoleCheck,
                _checks.GenericCheck, _checks.RuleCheck, _checks.AndCheck,
                _checks.OrCheck, _checks.NotCheck)


class _Enforcer(policy.Enforcer):
    """oslo.policy's Enforcer, looking at its files once a second at most.

    oslo.policy looks for the policy file and each of ``policy_dirs`` (a
    search of the config directories, then a stat of each) before every
    check; a request checks twice (``context_is_admin``, then its rule),
    and that search was a tenth of a one-row read's cost. A changed file
    now takes effect within RELOAD_CHECK_SECONDS instead.
    """

    _next_look = 0.0
    _decisions = None
    _remembers = False

    def load_rules(self, force_reload=False):
        now = time.monotonic()
        if force_reload or not self.rules or now >= self._next_look:
            super().load_rules(force_reload)
            self._next_look = now + RELOAD_CHECK_SECONDS
            self._forget()

    def set_rules(self, rules, overwrite=True, use_conf=False):
        super().set_rules(rules, overwrite=overwrite, use_conf=use_conf)
        self._forget()

    def _forget(self):
        self._decisions = {}
        self._remembers = all(_is_pure(rule) for rule in self.rules.values())

    def decide(self, action, target, context):
        """Whether ``action`` on ``target`` is allowed to ``context``.

        False for a token of a scope the rule does not take. A decision is
        remembered until the files are next looked at (or the rules set),
        when every rule is pure: oslo.policy inspects each check's
        signature as it evaluates it, most of a check's cost, and a server
        show checks five rules.
        """
        self.load_rules()
        decisions = self._decisions
        key = _decision_key(action, target, context) if (
            self._remembers) else None
        if key is not None:
            try:
                return decisions[key]
            except KeyError:
                pass
        allowed = self.authorize(action, target, context)
        if key is not None:
            if len(decisions) >= MAX_DECISIONS:
                decisions.clear()
            decisions[key] = allowed
        return allowed


def _is_pure(check):
    """Whether ``check``, and every check in it, is one of _PURE_CHECKS."""
    if not isinstance(check, _PURE_CHECKS):
        return False
    inner = getattr(check, 'rules', None) or [getattr(check, 'rule', None)]
    return all(_is_pure(rule) for rule in inner
               if isinstance(rule, _checks.BaseCheck))


def _decision_key(action, target, context):
    """A hashable key of what a decision depends on; None if there is none."""
    try:
        return (action, _frozen(target), _frozen(context.to_policy_values()))
    except TypeError:
        return None


def _frozen(mapping):
    # In the mapping's own order, unsorted: the same caller's credentials
    # come in the same order, and another order only misses the memo.
    return tuple((name, tuple(value) if isinstance(value, list) else value)
                 for name, value in mapping.items())


def make_enforcer(conf):
    """An oslo.policy Enforcer with the rules in code as defaults.

    Overrides come from ``[oslo_policy] policy_file`` (YAML or JSON) and
    ``policy_dirs``; a change to them takes effect within a second.
    """
    enforcer = _Enforcer(conf)
    enforcer.register_defaults(policies.list_rules())
    return enforcer


def check_policy_file(conf):
    """(the policy file's path or None, the rule names it sets unknown).

    Raises PolicyFileInvalid, naming the file, when it cannot be read or
    parsed or a rule of it is not a valid check: the API refuses to start
    on it, and the status command reports it.
    """
    # The Enforcer registers the [oslo_policy] options.
    enforcer = make_enforcer(conf)
    path = conf.find_file(conf.oslo_policy.policy_file)
    if path is None:
        return None, []
    try:
        with open(path) as policy_file:
            overrides = policy.parse_file_contents(policy_file.read()) or {}
        with _parser_quiet():
            enforcer.load_rules(force_reload=True)
        enforcer.check_rules(raise_on_violation=True)
    except (OSError, ValueError, policy.InvalidDefinitionError) as exc:
        raise exception.PolicyFileInvalid(
            path=path, reason=' '.join(str(exc).split()))
    unparsed = _unparsed(enforcer, overrides)
    if unparsed:
        raise exception.PolicyFileInvalid(
            path=path, reason='these rules cannot be parsed (a rule that '
            'denies everyone is "!"): %s' % ', '.join(unparsed))
    known = {rule.name for rule in policies.list_rules()}
    return path, sorted(set(overrides) - known)


@contextlib.contextmanager
def _parser_quiet():
    """oslo.policy logs a traceback for each rule it cannot parse."""
    parser_log = std_logging.getLogger('oslo_policy._parser')
    level = parser_log.level
    parser_log.setLevel(std_logging.CRITICAL)
    try:
        yield
    finally:
        parser_log.setLevel(level)


def _unparsed(enforcer, overrides):
    """Rules oslo.policy read as "deny everyone" though not written so.

    It reads a rule it cannot parse as "!".
    """
    return sorted(name for name, text in overrides.items()
                  if str(enforcer.rules.get(name)) == '!' and
                  str(text).strip() != '!')


class Authorizer:
    """Checks a request context against an action; raises or returns bool."""

    def __init__(self, conf):
        self.enforcer = make_enforcer(conf)

    def authorize(self, context, action, target, fatal=True):
        # A token of the wrong scope (e.g. system) is refused like any
        # other failed check, as Nova does: 403, not an error.
        allowed = self.enforcer.decide(action, target, context)
        if fatal and not allowed:
            raise exception.PolicyNotAuthorized(action=action)
        return allowed


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
