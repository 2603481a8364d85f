"""The fence-storm guard on changes of zones (an aggregate's hosts and
zone, a compute service deleted), on real SQLite, PostgreSQL and MariaDB."""

import threading
import time

import sqlalchemy as sa

from nova_forcedown import context as nf_context
from nova_forcedown.db import aggregates as db_aggregates
from nova_forcedown.db import models
from nova_forcedown.db import services as db_services
from nova_forcedown import exception
from nova_forcedown.objects import aggregate as aggregate_obj
from nova_forcedown.objects import fence_storm
from nova_forcedown.objects import service as service_obj
from tests.fixtures import databases
from tests.fixtures import db_rows
from tests.fixtures import sql_statements

HALF = fence_storm.FencingLimit(0.5, 'nova')
AZ_KEY = db_aggregates.AZ_KEY
Refused = exception.ZoneChangeLimitExceeded


def _aggregate(ctxt, name, zone=None, hosts=()):
    aggregate = db_aggregates.aggregate_create(
        ctxt, name, {AZ_KEY: zone} if zone else None)
    for host in hosts:
        db_aggregates.aggregate_host_add(ctxt, aggregate.id, host)
    return aggregate.id


def _services(ctxt, hosts, forced_down=False):
    for host in hosts:
        db_rows.create_service(ctxt, host=host, forced_down=forced_down)


def _force_down(ctxt, host):
    return service_obj.change_compute(
        ctxt, {'forced_down': True}, host=host, limit=HALF)[0]


def _service_id(ctxt, host):
    return db_services.service_get_by_host_and_binary(
        ctxt, host, models.COMPUTE_BINARY).id


def _shares(ctxt):
    """{zone: (forced down, total)} of the live compute services."""
    zones = {}
    for membership in db_aggregates.zone_memberships(ctxt):
        zones.setdefault(membership.host, set()).add(membership.zone)
    counts = {}
    for service in service_obj.ServiceList.get_all(
            ctxt, binary=models.COMPUTE_BINARY):
        for zone in zones.get(service.host, {'nova'}):
            forced, total = counts.get(zone, (0, 0))
            counts[zone] = (forced + service.forced_down, total + 1)
    return counts


def _message(change, counts):
    return ('%s would leave %s forced down, more than [fencing] '
            'max_forced_down_fraction 0.5 allows.' % (change, counts))


class ZoneChangesTestsMixin:
    """Zones of hosts, some forced down (F), at a limit of half.

    az1: a1 (F) a2 (F) a3 a4; az2: b1 b2; az3: c1 (F) c2 (F), over the
    limit, as a zone can be when the guard is turned on; nova, the default
    zone: n1 (F) n2 n3; gpu: no zone.
    """

    def setUp(self):
        super().setUp()
        ctxt = self.context
        _services(ctxt, ['a1', 'a2', 'c1', 'c2', 'n1'], forced_down=True)
        _services(ctxt, ['a3', 'a4', 'b1', 'b2', 'n2', 'n3'])
        self.az1 = _aggregate(ctxt, 'rack-1', 'az1', ['a1', 'a2', 'a3',
                                                      'a4'])
        self.az2 = _aggregate(ctxt, 'rack-2', 'az2', ['b1', 'b2'])
        self.az3 = _aggregate(ctxt, 'rack-3', 'az3', ['c1', 'c2'])
        self.gpu = _aggregate(ctxt, 'gpu')

    def _refused(self, function, *args, **kwargs):
        shares = _shares(self.context)
        error = self.assertRaises(Refused, function, self.context, *args,
                                  limit=HALF, **kwargs)
        self.assertEqual(shares, _shares(self.context))
        return str(error)

    def test_a_healthy_host_leaving_a_zone_is_judged_there(self):
        message = self._refused(aggregate_obj.write_host_remove,
                                self.az1, 'a3')
        self.assertEqual(_message(
            'Removing host a3 from aggregate %d' % self.az1,
            '2 of 3 compute hosts of zone az1'), message)
        self.assertEqual(['a1', 'a2', 'a3', 'a4'], db_aggregates.aggregate_get(
            self.context, self.az1).hosts)

    def test_a_forced_down_host_leaving_is_judged_where_it_lands(self):
        aggregate_obj.write_host_remove(self.context, self.az1, 'a1',
                                        limit=HALF)
        self.assertEqual((2, 4), _shares(self.context)['nova'])
        message = self._refused(aggregate_obj.write_host_remove,
                                self.az1, 'a2')
        self.assertEqual(_message(
            'Removing host a2 from aggregate %d' % self.az1,
            '3 of 5 compute hosts of zone nova'), message)

    def test_a_forced_down_host_joining_a_zone_counts_there(self):
        _force_down(self.context, 'b1')
        message = self._refused(aggregate_obj.write_host_add,
                                self.az2, 'n1')
        self.assertEqual(_message(
            'Adding host n1 to aggregate %d' % self.az2,
            '2 of 3 compute hosts of zone az2'), message)
        self.assertEqual(['b1', 'b2'], db_aggregates.aggregate_get(
            self.context, self.az2).hosts)

    def test_a_zone_over_the_limit_may_be_brought_back(self):
        aggregate_obj.write_host_add(self.context, self.az3, 'n2',
                                     limit=HALF)
        self.assertEqual((2, 3), _shares(self.context)['az3'])
        # Forcing down a host forced down already leaves the share as is.
        self.assertTrue(_force_down(self.context, 'c1').forced_down)
        message = self._refused(aggregate_obj.write_host_remove,
                                self.az3, 'n2')
        self.assertIn('2 of 2 compute hosts of zone az3', message)

    def test_an_aggregate_without_zone_changes_no_zone(self):
        aggregate_obj.write_host_add(self.context, self.gpu, 'n1',
                                     limit=HALF)
        aggregate_obj.write_host_add(self.context, self.gpu, 'a3',
                                     limit=HALF)
        aggregate_obj.write_host_remove(self.context, self.gpu, 'a3',
                                        limit=HALF)
        self.assertEqual(['n1'], db_aggregates.aggregate_get(
            self.context, self.gpu).hosts)

    def test_setting_a_zone_on_an_aggregate_is_judged(self):
        aggregate_obj.write_host_add(self.context, self.gpu, 'n1')
        expected = _message('Setting availability zone az5 on aggregate %d'
                            % self.gpu, '1 of 1 compute hosts of zone az5')
        self.assertEqual(expected, self._refused(
            aggregate_obj.write_metadata, self.gpu,
            {AZ_KEY: 'az5', 'ssd': 'true'}))
        self.assertEqual(expected, self._refused(
            aggregate_obj.write_update, self.gpu, name='gpu-5',
            metadata={AZ_KEY: 'az5'}))
        aggregate = db_aggregates.aggregate_get(self.context, self.gpu)
        self.assertEqual(('gpu', {}), (aggregate.name, aggregate.metadata))
        aggregate_obj.write_host_add(self.context, self.gpu, 'n2')
        aggregate_obj.write_update(self.context, self.gpu,
                                   metadata={AZ_KEY: 'az5'}, limit=HALF)
        self.assertEqual((1, 2), _shares(self.context)['az5'])

    def test_changing_a_zone_moves_its_hosts_and_is_judged(self):
        # az3's two forced-down hosts would join az2's two healthy ones.
        aggregate_obj.write_update(self.context, self.az3,
                                   metadata={AZ_KEY: 'az2'}, limit=HALF)
        self.assertEqual((2, 4), _shares(self.context)['az2'])
        message = self._refused(aggregate_obj.write_metadata,
                                self.az3, {AZ_KEY: 'az1'})
        self.assertEqual(_message(
            'Setting availability zone az1 on aggregate %d' % self.az3,
            '4 of 6 compute hosts of zone az1'), message)

    def test_removing_a_zone_is_judged_in_the_default_zone(self):
        # Nova's API refuses it; the guard judges it all the same.
        message = self._refused(aggregate_obj.write_metadata,
                                self.az3, {AZ_KEY: None})
        self.assertEqual(_message(
            'Removing availability zone az3 from aggregate %d' % self.az3,
            '3 of 5 compute hosts of zone nova'), message)

    def test_deleting_a_healthy_compute_service_is_judged(self):
        message = self._refused(service_obj.destroy_service,
                                _service_id(self.context, 'a3'))
        self.assertEqual(_message(
            'Deleting the compute service of host a3',
            '2 of 3 compute hosts of zone az1'), message)
        service_obj.destroy_service(
            self.context, _service_id(self.context, 'a1'), HALF)
        self.assertEqual((1, 3), _shares(self.context)['az1'])

    def test_a_host_with_instances_is_refused_as_nova_refuses_it(self):
        db_rows.create_instance(self.context, 'a3')
        self.assertRaises(exception.ServiceHostsInstances,
                          service_obj.destroy_service,
                          self.context, _service_id(self.context, 'a3'),
                          HALF)

    def test_a_host_in_two_zones_counts_in_each(self):
        # As a row written by hand, or before the one-zone rule.
        aggregate_obj.write_host_add(self.context, self.az1, 'b1')
        error = self.assertRaises(exception.ForcedDownLimitExceeded,
                                  _force_down, self.context, 'b1')
        self.assertIn('3 of 5 compute hosts of zone az1 forced', str(error))
        _force_down(self.context, 'b2')
        error = self.assertRaises(exception.ForcedDownLimitExceeded,
                                  _force_down, self.context, 'b1')
        self.assertEqual(
            'Forcing b1 down would put 3 of 5 compute hosts of zone az1 and '
            '2 of 2 compute hosts of zone az2 forced down, more than '
            '[fencing] max_forced_down_fraction 0.5 allows.', str(error))

    def test_without_the_guard_no_change_reads_the_services(self):
        changes = [
            (aggregate_obj.write_host_add, self.az2, 'n1'),
            (aggregate_obj.write_host_remove, self.az1, 'a3'),
            (aggregate_obj.write_metadata, self.az3,
             {AZ_KEY: 'az9'}),
            (aggregate_obj.write_update, self.az2, 'rack-two',
             {AZ_KEY: 'az8'}),
        ]
        with sql_statements.recorded_statements(self.engine) as statements:
            for function, *args in changes:
                function(self.context, *args)
        self.assertEqual([], [statement for statement in statements
                              if 'FROM services' in statement])

    def test_with_it_a_change_of_no_zone_reads_no_service(self):
        with sql_statements.recorded_statements(self.engine) as statements:
            aggregate_obj.write_host_add(self.context, self.gpu, 'a1',
                                         limit=HALF)
            aggregate_obj.write_metadata(
                self.context, self.az1, {'ssd': 'true'}, limit=HALF)
        self.assertEqual([], [statement for statement in statements
                              if 'FROM services' in statement])


def _request_context():
    return nf_context.RequestContext(user_id='fencer', project_id='ops',
                                     is_admin=True, roles=['admin'],
                                     overwrite=False)


class ConcurrentZoneChangesTestsMixin:
    """Force-downs, hosts moved and services deleted at once.

    az1: eight healthy hosts; nova: n0..n3 forced down, n4..n7 healthy, half
    of it. Three force-downs in az1, three forced-down hosts moved into it,
    a healthy host moved out, a healthy one deleted: each is allowed or
    refused, and neither zone may end with more than half of its hosts
    forced down, as it would were two of them to count before either
    wrote.
    """

    def _try(self, outcomes, start, change):
        ctxt = _request_context()
        start.wait()
        try:
            change(ctxt)
            outcomes.append('allowed')
        except (exception.ForcedDownLimitExceeded, Refused):
            outcomes.append('refused')
        except Exception as exc:  # noqa: the assertion shows it
            outcomes.append(repr(exc))

    def test_no_zone_passes_the_limit(self):
        ctxt = self.context
        _services(ctxt, ['a%d' % n for n in range(8)])
        _services(ctxt, ['n%d' % n for n in range(4)], forced_down=True)
        _services(ctxt, ['n%d' % n for n in range(4, 8)])
        rack = _aggregate(ctxt, 'rack-1', 'az1',
                          ['a%d' % n for n in range(8)])
        doomed = _service_id(ctxt, 'a7')
        changes = (
            [lambda c, h=host: _force_down(c, h) for host in
             ('a0', 'a1', 'a2')] +
            [lambda c, h=host: aggregate_obj.write_host_add(
                c, rack, h, limit=HALF) for host in ('n0', 'n1', 'n2')] +
            [lambda c: aggregate_obj.write_host_remove(
                c, rack, 'a6', limit=HALF),
             lambda c: service_obj.destroy_service(c, doomed, HALF)])
        start = threading.Barrier(len(changes))
        outcomes = []
        threads = [threading.Thread(target=self._try,
                                    args=(outcomes, start, change))
                   for change in changes]
        for thread in threads:
            thread.start()
        for thread in threads:
            thread.join(60)

        self.assertEqual(len(changes), len(outcomes))
        self.assertEqual(set(), set(outcomes) - {'allowed', 'refused'},
                         outcomes)
        for zone, (forced, total) in _shares(ctxt).items():
            self.assertLessEqual(forced / total, 0.5, (zone, outcomes))
        self.assertIn('refused', outcomes)

    def test_a_change_that_waited_counts_the_change_it_waited_for(self):
        """A force-down waits for a forced-down host's move into its zone.

        The move holds az1's services locked a while (a listener pauses
        it after its lock statement); the force-down starts then, waits
        for the locks, and must count the moved host once it has them:
        were it to count az1 as its lock statement first read it (four
        hosts, one forced down), it would pass, and az1 would end with
        three of five forced down.
        """
        ctxt = self.context
        _services(ctxt, ['a1', 'n0'], forced_down=True)
        _services(ctxt, ['a0', 'a2', 'a3', 'n1', 'n2'])
        rack = _aggregate(ctxt, 'rack-1', 'az1', ['a0', 'a1', 'a2', 'a3'])
        holding = threading.Event()
        mover = []

        def pause_the_move(connection, cursor, statement, *args):
            if (threading.current_thread() in mover and
                    not holding.is_set() and 'FOR UPDATE' in statement and
                    'FROM services' in statement):
                holding.set()
                time.sleep(0.5)

        sa.event.listen(self.engine, 'after_cursor_execute', pause_the_move)
        self.addCleanup(sa.event.remove, self.engine, 'after_cursor_execute',
                        pause_the_move)
        moved, forced = [], []
        start = threading.Barrier(1)
        move = threading.Thread(target=self._try, args=(
            moved, start, lambda c: aggregate_obj.write_host_add(
                c, rack, 'n0', limit=HALF)))
        mover.append(move)
        move.start()
        self.assertTrue(holding.wait(10))
        self._try(forced, start, lambda c: _force_down(c, 'a0'))
        move.join(10)

        self.assertEqual((['allowed'], ['refused']), (moved, forced))
        self.assertEqual((2, 5), _shares(ctxt)['az1'])


databases.backend_test_cases(ZoneChangesTestsMixin, globals())
# An in-memory SQLite database has one connection: the race needs two.
databases.backend_test_cases(ConcurrentZoneChangesTestsMixin, globals(),
                             databases.MIGRATED_FIXTURES[1:])
