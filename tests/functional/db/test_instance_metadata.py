"""A server's metadata written on SQLite, PostgreSQL and MariaDB.

Each write reads the server's row locked and writes it back in one
transaction: merges from many clients at once all land, a refused write
leaves nothing, and any text a value may hold comes back the same.
"""

import threading

from oslo_utils import timeutils

from nova_forcedown import context as nova_context
from nova_forcedown import exception
from nova_forcedown.objects import instance as instance_obj
from nova_forcedown.objects import instance_metadata
from tests.fixtures import databases
from tests.fixtures import db_rows

LIMIT = 128
CLIENTS = 8


class _ServerMixin:
    """One launched server on compute1, tagged HA_Enabled=True."""

    def setUp(self):
        super().setUp()
        self.uuid = db_rows.create_instance(
            self.context, 'compute1', launched_at=timeutils.utcnow(),
            user_metadata={'HA_Enabled': 'True'}).uuid

    def _metadata(self):
        return instance_obj.get_record(
            self.context, self.uuid).user_metadata


class InstanceMetadataTestsMixin(_ServerMixin):

    def test_merge_replace_and_delete(self):
        merged = instance_metadata.update(self.context, self.uuid,
                                          {'rack': 'r1'}, LIMIT)
        self.assertEqual({'HA_Enabled': 'True', 'rack': 'r1'}, merged)

        instance_metadata.update(self.context, self.uuid, {'rack': 'r2'},
                                 LIMIT, replace=True)
        instance_metadata.delete_item(self.context, self.uuid, 'rack')

        self.assertEqual({}, self._metadata())

    def test_a_write_over_the_limit_writes_nothing(self):
        self.assertRaises(exception.MetadataLimitExceeded,
                          instance_metadata.update, self.context, self.uuid,
                          {'rack': 'r1', 'row': '2'}, 2)
        self.assertEqual({'HA_Enabled': 'True'}, self._metadata())

    def test_any_text_of_255_characters_comes_back_the_same(self):
        value = ('ñ機😀' * 85)[:255]
        instance_metadata.update(self.context, self.uuid, {'note': value},
                                 LIMIT)
        self.assertEqual(value, self._metadata()['note'])


class ConcurrentInstanceMetadataMixin(_ServerMixin):
    """Concurrent writers, on PostgreSQL and MariaDB.

    SQLite's in-memory test database is one connection: its concurrent
    case is in tests/functional/db/test_sqlite_concurrency.py, on a file.
    """

    def test_merges_from_many_clients_at_once_all_land(self):
        start = threading.Barrier(CLIENTS)
        failures = []

        def merge(number):
            # Each client its own request context, as each API request.
            context = nova_context.get_admin_context()
            start.wait(10)
            try:
                instance_metadata.update(context, self.uuid,
                                         {'client-%d' % number: 'x'}, LIMIT)
            except Exception as error:  # reported below
                failures.append(error)

        clients = [threading.Thread(target=merge, args=(number,))
                   for number in range(CLIENTS)]
        for client in clients:
            client.start()
        for client in clients:
            client.join(60)

        self.assertEqual([], failures)
        self.assertEqual(CLIENTS + 1, len(self._metadata()))


databases.backend_test_cases(InstanceMetadataTestsMixin, globals())
databases.backend_test_cases(ConcurrentInstanceMetadataMixin, globals(),
                             databases.MIGRATED_FIXTURES[1:])
