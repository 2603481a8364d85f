"""A service's entity tag: every field a client sees, and nothing else."""

import datetime

from oslotest import base

from nova_forcedown.db import services as db_services
from nova_forcedown.objects import service as service_obj
from nova_forcedown.servicegroup import entity_tag

UUID = '5f0c9e3a-2b1d-4c7e-9a8f-0d1e2f3a4b5c'
THEN = datetime.datetime(2026, 11, 30, 12, 0, 0, 123456)

# What a client sees of the service: the fields of its view.
SHOWN = {'uuid': UUID, 'host': 'compute1', 'binary': 'nova-compute',
         'disabled': False, 'disabled_reason': None, 'forced_down': False,
         'updated_at': THEN}
# What it does not see.
UNSEEN = {'id': 7, 'topic': 'compute', 'report_count': 12,
          'last_seen_up': THEN, 'version': 1, 'rpc_server': 'compute1',
          'created_at': THEN, 'deleted_at': None, 'deleted': False}


def _service(**fields):
    return service_obj.Service(**{**SHOWN, **UNSEEN, **fields})


def _tag(service=None, is_up=True, zone='nova'):
    return entity_tag.service_tag(service or _service(), is_up, zone)


class TestServiceTag(base.BaseTestCase):

    def test_a_strong_quoted_tag(self):
        self.assertRegex(_tag(), r'\A"[0-9a-f]{32}"\Z')

    def test_the_same_service_has_the_same_tag(self):
        self.assertEqual(_tag(), _tag())

    def test_a_row_and_an_object_alike_have_the_same_tag(self):
        values = dict(SHOWN, **UNSEEN)
        row = db_services.ServiceRow(**{
            field: values.get(field)
            for field in db_services.ServiceRow._fields})
        self.assertEqual(_tag(), _tag(row))

    def test_each_field_a_client_sees_changes_it(self):
        tags = {
            'as read': _tag(),
            'another uuid': _tag(_service(
                uuid='0b7a3c9e-6d2f-4e1a-8b5c-9f0e1d2c3b4a')),
            'another host': _tag(_service(host='compute2')),
            'another binary': _tag(_service(binary='nova-scheduler')),
            'disabled': _tag(_service(disabled=True)),
            'a reason': _tag(_service(disabled_reason='fenced')),
            'forced down': _tag(_service(forced_down=True)),
            'updated': _tag(_service(
                updated_at=THEN + datetime.timedelta(microseconds=1))),
            'never updated': _tag(_service(updated_at=None)),
            'down': _tag(is_up=False),
            'another zone': _tag(zone='az1'),
            'no zone': _tag(zone=None),
        }
        self.assertEqual(len(tags), len(set(tags.values())), tags)

    def test_what_a_client_does_not_see_leaves_it(self):
        for field, value in (('id', 8), ('report_count', 13),
                             ('last_seen_up', THEN.replace(year=2027)),
                             ('version', 2), ('rpc_server', None),
                             ('created_at', None)):
            with self.subTest(field=field):
                self.assertEqual(_tag(), _tag(_service(**{field: value})))

    def test_forced_down_and_its_state_are_two_fields(self):
        # A host forced down is down; forced up while it still does not
        # heartbeat, it stays down: each is a change a client sees.
        self.assertNotEqual(_tag(_service(forced_down=True), is_up=False),
                            _tag(_service(forced_down=False), is_up=False))

    def test_the_view_timestamp_is_what_counts(self):
        # An aware updated_at (as an object may hold it) is the same time.
        aware = THEN.replace(tzinfo=datetime.timezone.utc)
        self.assertEqual(_tag(), _tag(_service(updated_at=aware)))
