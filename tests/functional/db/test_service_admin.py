"""Admin changes of a compute service: their history and the fence-storm
guard, on real SQLite, PostgreSQL and MariaDB databases."""

import threading

from nova_forcedown import context as nf_context
from nova_forcedown.db import aggregates as db_aggregates
from nova_forcedown.db import engine as db_engine
from nova_forcedown.db import service_history as db_history
from nova_forcedown import exception
from nova_forcedown.objects import fence_storm
from nova_forcedown.objects import service as service_obj
from nova_forcedown.objects import service_history
from tests.fixtures import databases
from tests.fixtures import db_rows

Change = service_history.Change


def _limit(fraction, default_zone='nova'):
    return fence_storm.FencingLimit(fraction, default_zone)


def _request_context(user='fencer', project='ops'):
    return nf_context.RequestContext(user_id=user, project_id=project,
                                     is_admin=True, roles=['admin'],
                                     overwrite=False)


def _update(ctxt, host, limit=None, **changes):
    return service_obj.change_compute(ctxt, changes, host=host,
                                      limit=limit)[0]


def _forced_hosts(ctxt):
    return sorted(service.host for service in
                  service_obj.ServiceList.get_all(ctxt)
                  if service.forced_down)


def _zone(ctxt, name, *hosts):
    aggregate = db_aggregates.aggregate_create(
        ctxt, 'aggregate-' + name, {db_aggregates.AZ_KEY: name})
    for host in hosts:
        db_aggregates.aggregate_host_add(ctxt, aggregate.id, host)


class HistoryTestsMixin:

    def setUp(self):
        super().setUp()
        self.service = db_rows.create_service(self.context,
                                              host='compute1')

    def test_each_change_records_who_when_which_request_and_what(self):
        ctxt = _request_context()
        _update(ctxt, 'compute1', forced_down=True)
        _update(ctxt, 'compute1', disabled=True, disabled_reason='fenced')
        _update(ctxt, 'compute1', disabled=False, disabled_reason=None)
        _update(ctxt, 'compute1', forced_down=False)

        entries = service_history.get_for_host(self.context, 'compute1')

        self.assertEqual(['clear-force-down', 'enable', 'disable',
                          'force-down'], [entry.event for entry in entries])
        self.assertEqual(
            [[Change('forced_down', True, False)],
             [Change('disabled', True, False),
              Change('disabled_reason', 'fenced', None)],
             [Change('disabled', False, True),
              Change('disabled_reason', None, 'fenced')],
             [Change('forced_down', False, True)]],
            [service_history.changes(entry) for entry in entries])
        for entry in entries:
            self.assertEqual(
                ('compute1', 'nova-compute', self.service.uuid, 'fencer',
                 'ops', ctxt.request_id),
                (entry.host, entry.binary, entry.service_uuid, entry.user_id,
                 entry.project_id, entry.request_id))
            self.assertIsNotNone(entry.created_at)

    def test_the_entry_is_written_with_the_change_at_the_same_time(self):
        service = service_obj.Service.update_compute(
            self.context, {'forced_down': True}, host='compute1')
        entry, = service_history.get_for_host(self.context, 'compute1')
        stored = service_obj.Service.get_by_id(self.context, service.id)
        self.assertEqual(stored.updated_at, service.updated_at)
        self.assertEqual(service.updated_at.replace(tzinfo=None),
                         entry.created_at)

    def test_a_change_that_changes_nothing_is_not_recorded(self):
        _update(self.context, 'compute1', forced_down=True)
        # A fence agent's retry: nothing new to record.
        _update(self.context, 'compute1', forced_down=True)
        entry, = service_history.get_for_host(self.context, 'compute1')
        self.assertEqual([Change('forced_down', False, True)],
                         service_history.changes(entry))

    def test_only_what_changed_is_recorded(self):
        _update(self.context, 'compute1', disabled=True,
                disabled_reason='fenced')
        _update(self.context, 'compute1', disabled=True,
                disabled_reason='fenced again')
        newest, _ = service_history.get_for_host(self.context, 'compute1')
        self.assertEqual([Change('disabled_reason', 'fenced',
                                 'fenced again')],
                         service_history.changes(newest))

    def test_an_unknown_host_records_nothing(self):
        self.assertRaises(exception.HostNotFound,
                          service_obj.Service.update_compute, self.context,
                          {'forced_down': True}, host='nowhere')
        self.assertEqual([], service_history.get_for_host(self.context,
                                                          'nowhere'))

    def test_record_and_change_are_undone_together(self):
        """A hook recording in a transaction that fails leaves nothing."""
        class Failed(Exception):
            pass

        @db_engine.writer
        def change_then_fail(context):
            db_history.history_record(
                context, 'compute1', 'evacuate',
                [Change('vm_state', 'active', 'rebuilding')])
            raise Failed()

        self.assertRaises(Failed, change_then_fail, self.context)
        self.assertEqual([], service_history.get_for_host(self.context,
                                                          'compute1'))

    def test_pages_newest_first_after_a_marker(self):
        for forced_down in (True, False, True, False, True):
            _update(self.context, 'compute1', forced_down=forced_down)
        db_rows.create_service(self.context, host='compute2')
        _update(self.context, 'compute2', forced_down=True)

        first = service_history.get_for_host(self.context, 'compute1',
                                             limit=2)
        rest = service_history.get_for_host(self.context, 'compute1',
                                            marker=first[-1].id)

        every = service_history.get_for_host(self.context, 'compute1')
        self.assertEqual(5, len(every))
        self.assertEqual(every, first + rest)
        self.assertEqual(sorted((entry.id for entry in every), reverse=True),
                         [entry.id for entry in every])
        other, = service_history.get_for_host(self.context, 'compute2')
        self.assertRaises(exception.MarkerNotFound,
                          service_history.get_for_host, self.context,
                          'compute1', marker=other.id)

    def test_history_outlives_the_service(self):
        _update(self.context, 'compute1', forced_down=True)
        service_obj.Service.get_by_id(self.context, self.service.id).destroy()
        self.assertEqual(1, len(service_history.get_for_host(self.context,
                                                             'compute1')))


class FencingGuardTestsMixin:
    """Four hosts in the default zone, two in zone az1, one elsewhere."""

    def setUp(self):
        super().setUp()
        for number in range(1, 8):
            db_rows.create_service(self.context, host='host%d' % number)
        db_rows.create_service(self.context, host='host1',
                               binary='nova-scheduler')
        _zone(self.context, 'az1', 'host5', 'host6')
        _zone(self.context, 'az2', 'host7')

    def test_refuses_what_would_pass_the_fraction_of_the_zone(self):
        limit = _limit(0.5)
        _update(self.context, 'host1', limit, forced_down=True)
        _update(self.context, 'host2', limit, forced_down=True)
        error = self.assertRaises(exception.ForcedDownLimitExceeded,
                                  _update, self.context, 'host3', limit,
                                  forced_down=True)
        self.assertEqual(
            'Forcing host3 down would put 3 of 4 compute hosts of zone nova '
            'forced down, more than [fencing] max_forced_down_fraction 0.5 '
            'allows.', str(error))
        self.assertEqual(['host1', 'host2'], _forced_hosts(self.context))
        self.assertEqual([], service_history.get_for_host(self.context,
                                                          'host3'))

    def test_zones_count_apart(self):
        limit = _limit(0.5)
        _update(self.context, 'host1', limit, forced_down=True)
        _update(self.context, 'host5', limit, forced_down=True)
        error = self.assertRaises(exception.ForcedDownLimitExceeded,
                                  _update, self.context, 'host6', limit,
                                  forced_down=True)
        self.assertIn('2 of 2 compute hosts of zone az1', str(error))
        self.assertRaises(exception.ForcedDownLimitExceeded, _update,
                          self.context, 'host7', limit, forced_down=True)

    def test_default_zone_is_the_configured_one(self):
        error = self.assertRaises(
            exception.ForcedDownLimitExceeded, _update, self.context,
            'host1', _limit(0.2, default_zone='dc1'), forced_down=True)
        self.assertIn('1 of 4 compute hosts of zone dc1', str(error))

    def test_raising_the_fraction_lets_the_operator_through(self):
        self.assertRaises(exception.ForcedDownLimitExceeded, _update,
                          self.context, 'host7', _limit(0.99),
                          forced_down=True)
        self.assertTrue(_update(self.context, 'host7', _limit(1.0),
                                forced_down=True).forced_down)

    def test_clearing_enabling_and_forcing_again_are_never_refused(self):
        _update(self.context, 'host7', forced_down=True)
        limit = _limit(0.5)
        self.assertTrue(_update(self.context, 'host7', limit,
                                forced_down=True).forced_down)
        _update(self.context, 'host7', limit, disabled=True)
        self.assertFalse(_update(self.context, 'host7', limit,
                                 forced_down=False).forced_down)

    def test_deleted_services_are_not_counted(self):
        for host in ('host2', 'host3'):
            service_obj.Service.get_by_host_and_binary(
                self.context, host, 'nova-compute').destroy()
        limit = _limit(0.5)
        _update(self.context, 'host1', limit, forced_down=True)
        error = self.assertRaises(exception.ForcedDownLimitExceeded,
                                  _update, self.context, 'host4', limit,
                                  forced_down=True)
        self.assertIn('2 of 2 compute hosts of zone nova', str(error))

    def test_unknown_host_is_none_guard_or_not(self):
        self.assertIsNone(_update(self.context, 'nowhere', _limit(0.5),
                                  forced_down=True))


class ConcurrentGuardTestsMixin:
    """Eight force-downs at once in a zone of eight, half allowed."""

    HOSTS = 8

    def test_concurrent_force_downs_never_pass_the_limit_together(self):
        for number in range(self.HOSTS):
            db_rows.create_service(self.context, host='host%d' % number)
        start = threading.Barrier(self.HOSTS)
        outcomes = []

        def force_down(host):
            ctxt = _request_context()
            start.wait()
            try:
                _update(ctxt, host, _limit(0.5), forced_down=True)
                outcomes.append('forced')
            except exception.ForcedDownLimitExceeded:
                outcomes.append('refused')
            except Exception as exc:  # noqa: the assertion shows it
                outcomes.append(repr(exc))

        threads = [threading.Thread(target=force_down, args=('host%d' % n,))
                   for n in range(self.HOSTS)]
        for thread in threads:
            thread.start()
        for thread in threads:
            thread.join()

        self.assertEqual(['forced'] * 4 + ['refused'] * 4, sorted(outcomes))
        self.assertEqual(4, len(_forced_hosts(self.context)))


for _mixin in (HistoryTestsMixin, FencingGuardTestsMixin):
    databases.backend_test_cases(_mixin, globals())
# An in-memory SQLite database has one connection: test_sqlite_concurrency
# runs this race on a file, through the app.
databases.backend_test_cases(ConcurrentGuardTestsMixin, globals(),
                             databases.MIGRATED_FIXTURES[1:])
