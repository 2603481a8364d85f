"""Numbers and times in requests: one answer on SQLite, PostgreSQL, MariaDB.

An integer in a path or a query string may have any number of digits:
past Python's int() limit (4300 digits) or past SQLite's 64 bits it gets
the answer a number just past the integer columns gets (no such row, an
unknown marker, an empty list; a limit is max_limit), never a 500. A
number of more than 4300 digits in a JSON body is a malformed body, as
Nova's decoder has it. A flavor id sent as a number is stored as its
text, under the rule of a string id. changes-since and changes-before
that leave the calendar once in UTC (9999-12-31T23:59:59-23:59 is in year
10000) match as the end or the start of time. The tests drive the real
WSGI app built from api-paste.ini on each real database.
"""

from oslo_serialization import jsonutils
from oslo_utils import timeutils
import sqlalchemy as sa
import webob

from nova_forcedown.api import deploy
from nova_forcedown.api import validation
from nova_forcedown import context as nf_context
from nova_forcedown.db import models
from tests.fixtures import api_world
from tests.fixtures import configuration
from tests.fixtures import databases
from tests.fixtures import db_rows

ADMIN_HEADERS = {'X-Auth-Token': 'admin:' + api_world.ADMIN_PROJECT}
MAX_LIMIT = 1000
# Past Python's int() limit, with and without leading zeros; past 64 bits;
# past the 32-bit columns.
HUGE = '9' * 5000
ZEROS = '0' * 5000
PAST_64_BITS = str(2 ** 64)
PAST_32_BITS = str(2 ** 31)
PAST_EVERY_ROW = (HUGE, '1' + ZEROS, PAST_64_BITS, str(2 ** 63),
                  PAST_32_BITS)
# Year 10000 and year 0 once in UTC.
LATE = '9999-12-31T23:59:59-23:59'
EARLY = '0001-01-01T00:00:00+23:59'


class NumbersOnBackendsMixin:
    """A little of everything a number or a time can reach.

    host1 up, host2 forced down, each with a node; servers of the admin's
    project: ``running`` (power state 1) and ``no-state`` on host1, and
    ``evacuee`` evacuated from host2 (one migration, one action); host1's
    service disabled (one history entry); flavor ``numbers``.
    """

    def setUp(self):
        super().setUp()
        conf = self.useFixture(configuration.ConfFixture(
            api__auth_strategy='noauth2')).conf
        self.app = deploy.load_app(conf)
        ctxt = nf_context.get_admin_context()
        up = db_rows.create_service(ctxt, host='host1')
        self.node = db_rows.create_compute_node(ctxt, up, 'host1')
        down = db_rows.create_service(ctxt, host='host2',
                                      forced_down=True)
        db_rows.create_compute_node(ctxt, down, 'host2')
        self.service = up
        project = {'project_id': api_world.ADMIN_PROJECT}
        db_rows.create_instance(ctxt, 'host1', name='running',
                                power_state=1, **project)
        db_rows.create_instance(ctxt, 'host1', name='no-state',
                                power_state=None, **project)
        self.evacuee = db_rows.create_instance(
            ctxt, 'host2', name='evacuee', power_state=4,
            launched_at=timeutils.utcnow(), **project).uuid
        self.assertEqual(200, self.send(
            'POST', '/v2.1/servers/%s/action' % self.evacuee, '2.53',
            {'evacuate': {}}).status_code)
        self._migration_moved_on()
        self.assertEqual(200, self.send(
            'PUT', '/v2.1/os-services/%s' % up.uuid, '2.53',
            {'status': 'disabled', 'disabled_reason': 'audit'}).status_code)
        self.assertEqual(200, self.send(
            'POST', '/v2.1/flavors', '2.1', {'flavor': {
                'name': 'numbers', 'id': 'numbers', 'ram': 512, 'vcpus': 1,
                'disk': 1}}).status_code)

    def _migration_moved_on(self):
        """The evacuation's migration, updated as an agent updates it.

        changes-since and changes-before match a migration's updated_at,
        as in Nova, and a migration no agent took up has none.
        """
        with self.engine.begin() as connection:
            connection.execute(sa.update(models.Migration).values(
                updated_at=timeutils.utcnow()))

    def send(self, method, path, version=None, body=None):
        req = webob.Request.blank(path, method=method,
                                  headers=ADMIN_HEADERS)
        if version:
            req.headers['OpenStack-API-Version'] = 'compute ' + version
        if body is not None:
            req.content_type = 'application/json'
            req.body = (body if isinstance(body, bytes)
                        else jsonutils.dump_as_bytes(body))
        return req.get_response(self.app)

    def assertFault(self, resp, status, message, what=None):
        what = what or ''
        self.assertEqual(status, resp.status_code,
                         '%s: %s' % (what[:120], resp.body[:300]))
        fault = {400: 'badRequest', 404: 'itemNotFound'}[status]
        self.assertEqual({fault: {'code': status, 'message': message}},
                         resp.json, what[:120])

    def assertListing(self, expected, resp, what):
        self.assertEqual(200, resp.status_code,
                         '%s: %s' % (what[:120], resp.body[:300]))
        self.assertEqual(expected, resp.json, what[:120])

    # ------------------------------------------------------ ids in paths

    def test_ids_of_any_length_in_paths_name_nothing(self):
        for digits in PAST_EVERY_ROW:
            for method, path, version, message in (
                    ('DELETE', '/v2.1/os-services/%s', '2.1',
                     'Service %s not found.'),
                    ('GET', '/v2.1/os-hypervisors/%s', '2.1',
                     "Hypervisor with ID '%s' could not be found."),
                    ('GET', '/v2.1/os-hypervisors/%s/uptime', '2.1',
                     "Hypervisor with ID '%s' could not be found."),
                    ('GET', '/v2.1/os-aggregates/%s', '2.1',
                     'Aggregate %s could not be found.'),
                    ('GET', '/v2.1/flavors/%s', '2.1',
                     'Flavor %s could not be found.'),
                    ('GET', '/v2.1/servers/%s', '2.1',
                     'Instance %s could not be found.')):
                self.assertFault(self.send(method, path % digits, version),
                                 404, message % digits, path % digits)
        services = self.send('GET', '/v2.1/os-services').json['services']
        self.assertEqual(2, len(services))

    def test_leading_zeros_are_read_as_int_reads_them(self):
        resp = self.send('GET', '/v2.1/os-hypervisors/%s%d'
                         % (ZEROS, self.node.id), '2.1')
        self.assertEqual(200, resp.status_code, resp.body[:300])
        self.assertEqual(self.node.id, resp.json['hypervisor']['id'])

    # ---------------------------------------------------- query integers

    def test_a_limit_of_any_length_is_max_limit(self):
        history = '/v2.1/os-services/%s/history' % self.service.uuid
        actions = '/v2.1/servers/%s/os-instance-actions' % self.evacuee
        for path, version in (
                ('/v2.1/os-hypervisors', '2.33'),
                ('/v2.1/os-hypervisors/detail', '2.53'),
                ('/v2.1/flavors', '2.1'),
                ('/v2.1/flavors/detail', '2.75'),
                ('/v2.1/servers', '2.1'),
                ('/v2.1/servers/detail', '2.75'),
                ('/v2.1/os-migrations', '2.59'),
                (actions, '2.58'),
                (history, '2.1')):
            expected = self.send('GET', '%s?limit=%d' % (path, MAX_LIMIT),
                                 version).json
            self.assertNotIn('badRequest', expected, path)
            for digits in PAST_EVERY_ROW:
                target = '%s?limit=%s' % (path, digits)
                self.assertListing(expected,
                                   self.send('GET', target, version), target)

    def test_minimums_past_every_flavor_match_none(self):
        everything = self.send('GET', '/v2.1/flavors').json
        self.assertIn('numbers', [f['id'] for f in everything['flavors']])
        for name in ('minRam', 'minDisk'):
            for digits in PAST_EVERY_ROW:
                target = '/v2.1/flavors?%s=%s' % (name, digits)
                self.assertListing({'flavors': []}, self.send('GET', target),
                                   target)
                target = '/v2.1/flavors?%s=-%s' % (name, digits)
                self.assertListing(everything, self.send('GET', target),
                                   target)

    def test_power_states_no_server_has_match_none(self):
        for text in PAST_EVERY_ROW + ('-1', '-' + HUGE, 'abc'):
            target = '/v2.1/servers?power_state=%s' % text
            self.assertListing({'servers': []},
                               self.send('GET', target, '2.83'), target)
        resp = self.send('GET', '/v2.1/servers?power_state=%s1' % ZEROS,
                         '2.83')
        self.assertEqual(['running'],
                         [server['name'] for server in resp.json['servers']])

    def test_markers_past_every_row_are_unknown(self):
        history = '/v2.1/os-services/%s/history' % self.service.uuid
        for digits in PAST_EVERY_ROW:
            for path, version, message in (
                    (history, '2.1', 'marker [%s] not found'),
                    ('/v2.1/os-hypervisors', '2.33',
                     'marker [%s] not found'),
                    ('/v2.1/flavors', '2.1', 'marker [%s] not found'),
                    ('/v2.1/servers', '2.1', 'marker [%s] not found'),
                    ('/v2.1/os-migrations', '2.59',
                     'Marker %s could not be found.')):
                target = '%s?marker=%s' % (path, digits)
                self.assertFault(self.send('GET', target, version), 400,
                                 message % digits, target)

    # ----------------------------------------------------------- bodies

    def test_json_numbers_past_the_int_limit_are_malformed(self):
        for body in (
                b'{"flavor": {"name": "f", "ram": %s, "vcpus": 1, '
                b'"disk": 1}}' % HUGE.encode(),
                b'{"flavor": {"name": "f", "ram": 1, "vcpus": 1, '
                b'"disk": 1, "id": -%s}}' % HUGE.encode()):
            self.assertFault(self.send('POST', '/v2.1/flavors', '2.1', body),
                             400, validation.MALFORMED_BODY)

    def test_counts_as_strings_of_any_length_are_above_the_maximum(self):
        for digits in PAST_EVERY_ROW:
            resp = self.send('POST', '/v2.1/flavors', '2.1', {'flavor': {
                'name': 'f', 'ram': digits, 'vcpus': 1, 'disk': 1}})
            self.assertFault(resp, 400, 'Invalid input received: memory_mb '
                             'must be <= 2147483647', digits)

    def test_a_number_flavor_id_is_checked_as_its_text(self):
        for number, text in ((int('1' * 300), '1' * 300),
                             (1e300, '1e+300')):
            body = {'flavor': {'name': 'f', 'ram': 1, 'vcpus': 1, 'disk': 1}}
            body['flavor']['id'] = text
            as_text = self.send('POST', '/v2.1/flavors', '2.1', body)
            self.assertEqual(400, as_text.status_code, as_text.body)
            body['flavor']['id'] = number
            as_number = self.send('POST', '/v2.1/flavors', '2.1', body)
            self.assertFault(as_number, 400,
                             as_text.json['badRequest']['message'], text)
            self.assertEqual(
                404, self.send('GET', '/v2.1/flavors/' + text).status_code)
        for number, text in ((int('2' * 255), '2' * 255), (42, '42'),
                             (-7, '-7'), (1.5, '1.5')):
            resp = self.send('POST', '/v2.1/flavors', '2.1', {'flavor': {
                'name': 'f' + text[:200], 'id': number, 'ram': 1,
                'vcpus': 1, 'disk': 1}})
            self.assertEqual(200, resp.status_code, resp.body[:300])
            self.assertEqual(text, resp.json['flavor']['id'])
            self.assertEqual(
                200, self.send('GET', '/v2.1/flavors/' + text).status_code)

    # ------------------------------------------------- changes-since/before

    def _windows(self):
        """(listing path, version, key of its items) with a window."""
        actions = '/v2.1/servers/%s/os-instance-actions' % self.evacuee
        return (('/v2.1/servers', '2.66', 'servers'),
                ('/v2.1/servers/detail', '2.66', 'servers'),
                (actions, '2.66', 'instanceActions'),
                ('/v2.1/os-migrations', '2.66', 'migrations'),
                ('/v2.1/os-migrations', '2.80', 'migrations'))

    def test_a_window_past_the_calendar_matches_as_the_end_of_time(self):
        for path, version, key in self._windows():
            everything = self.send(
                'GET', path + '?changes-since=2000-01-01T00:00:00Z',
                version).json
            self.assertTrue(everything[key], path)
            for query, expected in (
                    ('changes-since=' + LATE, {key: []}),
                    ('changes-before=' + EARLY, {key: []}),
                    ('changes-since=' + EARLY, everything),
                    ('changes-before=' + LATE, everything),
                    ('changes-since=%s&changes-before=%s' % (EARLY, LATE),
                     everything),
                    ('changes-since=%s&changes-before=%s' % (LATE, LATE),
                     {key: []}),
                    ('changes-since=0001-01-01T00:00:00Z', everything),
                    ('changes-before=9999-12-31T23:59:59Z', everything)):
                target = '%s?%s' % (path, query.replace('+', '%2B'))
                self.assertListing(expected,
                                   self.send('GET', target, version), target)

    def test_changes_since_alone_past_the_calendar(self):
        actions = '/v2.1/servers/%s/os-instance-actions' % self.evacuee
        for path, version, key in (('/v2.1/servers', '2.1', 'servers'),
                                   (actions, '2.58', 'instanceActions'),
                                   ('/v2.1/os-migrations', '2.59',
                                    'migrations')):
            target = '%s?changes-since=%s' % (path, LATE)
            self.assertListing({key: []}, self.send('GET', target, version),
                               target)
            target = '%s?changes-since=%s' % (path, EARLY.replace('+', '%2B'))
            resp = self.send('GET', target, version)
            self.assertEqual(200, resp.status_code, resp.body[:300])
            self.assertTrue(resp.json[key], target)

    def test_a_window_that_ends_before_it_starts_past_the_calendar(self):
        late = '9999-12-31T23:59:59-23:58'
        for path, version, _ in self._windows():
            # Both are in year 10000 once in UTC, one a minute earlier.
            target = '%s?changes-since=%s&changes-before=%s' % (
                path, LATE, late)
            self.assertFault(self.send('GET', target, version), 400,
                             validation.CHANGES_ORDER, target)


databases.backend_test_cases(NumbersOnBackendsMixin, globals())
