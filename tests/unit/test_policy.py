"""Policies: Nova's rule names, admin defaults and operator overrides."""

import json
import os
import subprocess
import sys

import fixtures
from oslotest import base
import yaml

from nova_forcedown import context
from nova_forcedown import exception
from nova_forcedown import policy
from tests.fixtures import configuration

ADMIN_RULES = (
    'os_compute_api:os-services:list',
    'os_compute_api:os-services:update',
    'os_compute_api:os-services:delete',
    'os_compute_api:os-hypervisors:list',
    'os_compute_api:os-hypervisors:list-detail',
    'os_compute_api:os-hypervisors:show',
    'os_compute_api:os-hypervisors:statistics',
    'os_compute_api:os-hypervisors:uptime',
    'os_compute_api:os-hypervisors:search',
    'os_compute_api:os-hypervisors:servers',
    'os_compute_api:os-aggregates:index',
    'os_compute_api:os-aggregates:create',
    'os_compute_api:os-aggregates:show',
    'os_compute_api:os-aggregates:update',
    'os_compute_api:os-aggregates:delete',
    'os_compute_api:os-aggregates:add_host',
    'os_compute_api:os-aggregates:remove_host',
    'os_compute_api:os-aggregates:set_metadata',
    'compute:aggregates:images',
    'os_compute_api:os-flavor-manage:create',
    'os_compute_api:os-flavor-manage:update',
    'os_compute_api:os-flavor-manage:delete',
    'os_compute_api:os-flavor-extra-specs:create',
    'os_compute_api:os-flavor-extra-specs:update',
    'os_compute_api:os-flavor-extra-specs:delete',
)
# Readers of their own project, and admins.
PROJECT_READER_RULES = (
    'os_compute_api:os-flavor-extra-specs:index',
    'os_compute_api:os-flavor-extra-specs:show',
)
EXTENSIONS_RULE = 'os_compute_api:extensions'
AZ_LIST_RULE = 'os_compute_api:os-availability-zone:list'
AZ_DETAIL_RULE = 'os_compute_api:os-availability-zone:detail'

BIN_DIR = os.path.dirname(sys.executable)


def _context(authorizer, roles, user='someone'):
    return context.RequestContext(user_id=user, project_id='project1',
                                  roles=roles, enforcer=authorizer)


class PolicyTestCase(base.BaseTestCase):

    def setUp(self):
        super().setUp()
        self.directory = self.useFixture(fixtures.TempDir()).path

    def _authorizer(self, policy_file=None):
        args = []
        if policy_file is not None:
            args = ['--config-file', self._write(
                'nova_forcedown.conf',
                '[oslo_policy]\npolicy_file = %s\n' % policy_file)]
        conf = self.useFixture(configuration.ConfFixture(args)).conf
        return policy.Authorizer(conf)

    def _write(self, name, text):
        path = os.path.join(self.directory, name)
        with open(path, 'w') as out:
            out.write(text)
        return path


class TestDefaults(PolicyTestCase):

    def setUp(self):
        super().setUp()
        self.authorizer = self._authorizer()
        self.admin = _context(self.authorizer, ['admin', 'member'])
        self.member = _context(self.authorizer, ['member', 'reader'])

    def test_every_nova_rule_is_registered_with_an_admin_default(self):
        rules = self.authorizer.enforcer.registered_rules
        for name in ADMIN_RULES:
            self.assertIn(name, rules)
            self.assertEqual('rule:context_is_admin', rules[name].check_str)
        self.assertEqual('role:admin', rules['context_is_admin'].check_str)
        self.assertEqual('@', rules[EXTENSIONS_RULE].check_str)

    def test_admin_passes_every_rule(self):
        for name in ADMIN_RULES + (EXTENSIONS_RULE,):
            self.assertTrue(self.admin.can(name), name)

    def test_member_is_refused_every_admin_rule(self):
        for name in ADMIN_RULES:
            error = self.assertRaises(exception.PolicyNotAuthorized,
                                      self.member.can, name)
            self.assertIn(name, str(error))
            self.assertFalse(self.member.can(name, fatal=False))

    def test_anyone_may_list_extensions(self):
        self.assertTrue(self.member.can(EXTENSIONS_RULE))
        self.assertTrue(_context(self.authorizer, []).can(EXTENSIONS_RULE))

    def test_anyone_may_list_zones_but_only_an_admin_sees_hosts(self):
        rules = self.authorizer.enforcer.registered_rules
        self.assertEqual('@', rules[AZ_LIST_RULE].check_str)
        self.assertEqual('rule:context_is_admin',
                         rules[AZ_DETAIL_RULE].check_str)
        self.assertTrue(self.member.can(AZ_LIST_RULE))
        self.assertTrue(self.admin.can(AZ_DETAIL_RULE))
        self.assertFalse(self.member.can(AZ_DETAIL_RULE, fatal=False))

    def test_readers_read_extra_specs_in_their_own_project(self):
        own = {'project_id': 'project1'}
        other = {'project_id': 'project2'}
        reader = _context(self.authorizer, ['reader'])
        for name in PROJECT_READER_RULES:
            self.assertEqual('rule:project_reader_or_admin',
                             self.authorizer.enforcer.registered_rules[
                                 name].check_str)
            self.assertTrue(reader.can(name, own), name)
            self.assertFalse(reader.can(name, other, fatal=False), name)
            self.assertTrue(self.admin.can(name, other), name)
            self.assertFalse(_context(self.authorizer, []).can(
                name, own, fatal=False), name)

    def test_system_scoped_admin_is_refused_like_any_failed_check(self):
        system_admin = context.RequestContext(
            user_id='cloud-admin', system_scope='all', roles=['admin'],
            enforcer=self.authorizer)
        self.assertRaises(exception.PolicyNotAuthorized, system_admin.can,
                          'os_compute_api:os-services:update')
        self.assertFalse(system_admin.can('os_compute_api:os-services:list',
                                          fatal=False))

    def test_context_without_an_enforcer_is_refused(self):
        lone = context.RequestContext(roles=['admin'])
        self.assertRaises(exception.PolicyNotAuthorized, lone.can,
                          ADMIN_RULES[0])

    def test_admin_context_of_the_tools_is_an_admin(self):
        tools = context.get_admin_context()
        tools.enforcer = self.authorizer
        self.assertTrue(tools.can('os_compute_api:os-services:update'))


class TestOverrides(PolicyTestCase):
    """A policy file changes the rules it names and only those."""

    OVERRIDES = {
        'os_compute_api:os-services:list': 'role:reader',
        'os_compute_api:os-services:update': 'role:fence-agent',
    }

    def _assert_overrides_honoured(self, policy_file):
        authorizer = self._authorizer(policy_file)
        reader = _context(authorizer, ['reader'])
        fencer = _context(authorizer, ['fence-agent'])
        admin = _context(authorizer, ['admin'])

        self.assertTrue(reader.can('os_compute_api:os-services:list'))
        self.assertTrue(fencer.can('os_compute_api:os-services:update'))
        self.assertFalse(admin.can('os_compute_api:os-services:update',
                                   fatal=False))
        # Rules the file does not name keep their defaults.
        self.assertTrue(admin.can('os_compute_api:os-services:delete'))
        self.assertFalse(fencer.can('os_compute_api:os-services:delete',
                                    fatal=False))

    def test_policy_yaml(self):
        self._assert_overrides_honoured(
            self._write('policy.yaml', yaml.safe_dump(self.OVERRIDES)))

    def test_policy_json(self):
        self._assert_overrides_honoured(
            self._write('policy.json', json.dumps(self.OVERRIDES)))


class _CountedCheck(policy.policy.Check):
    """``counted:<anything>``: allows, and counts how often it is asked."""

    asked = 0

    def __call__(self, target, creds, enforcer):
        type(self).asked += 1
        return True


class TestRememberedDecisions(PolicyTestCase):
    """Decisions remembered between looks at the file are still right."""

    def test_each_caller_and_target_gets_its_own_answer(self):
        authorizer = self._authorizer()
        admin = _context(authorizer, ['admin'])
        reader = _context(authorizer, ['reader'])
        other_reader = context.RequestContext(
            user_id='someone', project_id='project2', roles=['reader'],
            enforcer=authorizer)
        own = {'project_id': 'project1'}
        for _ in range(3):
            self.assertTrue(admin.can(ADMIN_RULES[0]))
            self.assertFalse(reader.can(ADMIN_RULES[0], fatal=False))
            self.assertTrue(reader.can(PROJECT_READER_RULES[0], own))
            self.assertFalse(other_reader.can(PROJECT_READER_RULES[0], own,
                                              fatal=False))
            self.assertRaises(exception.PolicyNotAuthorized, reader.can,
                              ADMIN_RULES[0])

    def test_a_check_of_a_plug_in_is_asked_every_time(self):
        policy.policy.register('counted', _CountedCheck)
        self.addCleanup(policy._checks.registered_checks.pop, 'counted')
        authorizer = self._authorizer(self._write(
            'policy.yaml', yaml.safe_dump(
                {ADMIN_RULES[0]: 'role:admin or counted:x'})))
        member = _context(authorizer, ['member'])
        for _ in range(3):
            self.assertTrue(member.can(ADMIN_RULES[0]))
        self.assertEqual(3, _CountedCheck.asked)


class TestGenerators(PolicyTestCase):
    """The oslopolicy tools find the rules through the entry points."""

    def _run(self, tool, *args):
        result = subprocess.run(
            [os.path.join(BIN_DIR, tool), '--namespace', 'nova_forcedown',
             *args], capture_output=True, text=True, timeout=60)
        self.assertEqual(0, result.returncode, result.stderr)
        return result.stdout

    def test_sample_generator_documents_every_rule(self):
        sample = self._run('oslopolicy-sample-generator')
        for name in ADMIN_RULES:
            self.assertIn('#"%s": "rule:context_is_admin"' % name, sample)
        self.assertIn('#"%s": "@"' % EXTENSIONS_RULE, sample)
        self.assertIn('#"%s": "@"' % AZ_LIST_RULE, sample)
        self.assertIn('#"%s": "rule:context_is_admin"' % AZ_DETAIL_RULE,
                      sample)
        self.assertIn('PUT  /os-services/force-down', sample)

    def test_policy_generator_shows_the_effective_policy(self):
        policy_file = self._write('policy.yaml', yaml.safe_dump(
            {'os_compute_api:os-hypervisors:list': 'role:reader'}))
        config = self._write('nova_forcedown.conf',
                             '[oslo_policy]\npolicy_file = %s\n'
                             % policy_file)

        effective = yaml.safe_load(self._run(
            'oslopolicy-policy-generator', '--config-file', config))

        self.assertEqual('role:reader',
                         effective['os_compute_api:os-hypervisors:list'])
        self.assertEqual('rule:context_is_admin',
                         effective['os_compute_api:os-services:update'])
