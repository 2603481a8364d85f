"""A change of a compute service on a condition (``If-Match``) is judged in
its own transaction, on the row it locked: through the real app, on real
SQLite, PostgreSQL and MariaDB databases.

A fault monitor reads the service and its entity tag, decides, and writes
with the tag. Whatever changed the service in between (its heartbeat
brought it back, another admin forced it up) makes the write a 412 that
writes nothing: no change, no history entry.
"""

import datetime
import threading

import fixtures
from oslo_serialization import jsonutils
from oslo_utils import timeutils
import webob

from nova_forcedown.api import deploy
from nova_forcedown import context as nf_context
from nova_forcedown.db import services as db_services
from nova_forcedown.objects import service as service_obj
from nova_forcedown.objects import service_history
from tests.fixtures import configuration
from tests.fixtures import databases
from tests.fixtures import db_rows

ADMIN_TOKEN = 'admin:6f70656e737461636b'


class _AppMixin:

    def setUp(self):
        super().setUp()
        self.conf = self.useFixture(configuration.ConfFixture(
            api__auth_strategy='noauth2')).conf
        self.app = deploy.load_app(self.conf)
        # Its heartbeats stopped an hour ago: down.
        self.service = db_rows.create_service(
            self.context, host='compute1',
            last_seen_up=timeutils.utcnow() - datetime.timedelta(hours=1))

    def request(self, method, body=None, if_match=None):
        headers = {'X-Auth-Token': ADMIN_TOKEN,
                   'OpenStack-API-Version': 'compute 2.53'}
        if if_match is not None:
            headers['If-Match'] = if_match
        req = webob.Request.blank(
            '/v2.1/os-services/' + self.service.uuid, method=method,
            headers=headers)
        if body is not None:
            req.json_body = body
        return req.get_response(self.app)

    def read(self):
        """(the service as the API shows it, its entity tag)."""
        resp = self.request('GET')
        self.assertEqual(200, resp.status_int, resp.body)
        return jsonutils.loads(resp.body)['service'], resp.headers['ETag']

    def history(self):
        return service_history.get_for_host(self.context, 'compute1')

    def assertRefusedAsChanged(self, resp, tag):
        self.assertEqual(412, resp.status_int, resp.body)
        self.assertEqual(
            {'computeFault': {
                'code': 412,
                'message': 'The service %s changed since the entity tag %s '
                           'was read. Read it again before deciding on the '
                           'change.' % (self.service.uuid, tag)}},
            jsonutils.loads(resp.body))


class IfMatchTestsMixin(_AppMixin):

    def test_a_heartbeat_since_the_read_refuses_the_change(self):
        shown, tag = self.read()
        self.assertEqual('down', shown['state'])
        # The monitor judged the host dead; it comes back meanwhile.
        service_obj.Service.get_by_uuid(
            self.context, self.service.uuid).record_heartbeat()

        self.assertRefusedAsChanged(
            self.request('PUT', {'forced_down': True}, if_match=tag), tag)

        stored = service_obj.Service.get_by_uuid(self.context,
                                                 self.service.uuid)
        self.assertFalse(stored.forced_down)
        self.assertEqual([], self.history())
        now, new_tag = self.read()
        self.assertEqual('up', now['state'])
        self.assertNotEqual(tag, new_tag)

    def test_a_force_up_since_the_read_refuses_the_change(self):
        self.assertEqual(200, self.request(
            'PUT', {'forced_down': True}).status_int)
        shown, tag = self.read()
        self.assertTrue(shown['forced_down'])
        # Another admin clears the force-down.
        self.assertEqual(200, self.request(
            'PUT', {'forced_down': False}).status_int)
        written = self.history()

        self.assertRefusedAsChanged(
            self.request('PUT', {'status': 'disabled',
                                 'disabled_reason': 'fenced'},
                         if_match=tag), tag)

        now, _ = self.read()
        self.assertEqual(('enabled', None, False),
                         (now['status'], now['disabled_reason'],
                          now['forced_down']))
        self.assertEqual(written, self.history())

    def test_the_tag_read_lets_the_change_through(self):
        _, tag = self.read()

        resp = self.request('PUT', {'forced_down': True}, if_match=tag)

        self.assertEqual(200, resp.status_int, resp.body)
        now, new_tag = self.read()
        self.assertTrue(now['forced_down'])
        self.assertEqual(new_tag, resp.headers['ETag'])
        self.assertEqual(['force-down'],
                         [entry.event for entry in self.history()])


class IfMatchWhileLockedTestsMixin(_AppMixin):
    """A change committed after the request began, before its lock.

    The heartbeat commits from another connection while the PUT's
    transaction is open, just before it locks the row: a tag judged on
    anything read before the lock would still match. PostgreSQL and
    MariaDB only: SQLite's writer holds the whole database from the
    start of its transaction.
    """

    def test_the_tag_is_judged_on_the_row_locked(self):
        _, tag = self.read()
        lock = db_services.service_lock_compute
        heartbeats = []

        def heartbeat_then_lock(ctxt, *args, **kwargs):
            if not heartbeats:
                # From another thread: another connection and transaction.
                beat = threading.Thread(target=self._heartbeat,
                                        args=(heartbeats,))
                beat.start()
                beat.join()
            return lock(ctxt, *args, **kwargs)

        self.useFixture(fixtures.MonkeyPatch(
            'nova_forcedown.db.services.service_lock_compute',
            heartbeat_then_lock))

        resp = self.request('PUT', {'forced_down': True}, if_match=tag)

        self.assertEqual(['committed'], heartbeats)
        self.assertRefusedAsChanged(resp, tag)
        stored = service_obj.Service.get_by_uuid(self.context,
                                                 self.service.uuid)
        self.assertFalse(stored.forced_down)
        self.assertEqual(1, stored.report_count)
        self.assertEqual([], self.history())

    def _heartbeat(self, heartbeats):
        ctxt = nf_context.get_admin_context()
        service_obj.Service.get_by_uuid(ctxt,
                                        self.service.uuid).record_heartbeat()
        heartbeats.append('committed')


databases.backend_test_cases(IfMatchTestsMixin, globals())
databases.backend_test_cases(IfMatchWhileLockedTestsMixin, globals(),
                             databases.MIGRATED_FIXTURES[1:])
