"""Server views: what a view shows of a record, by microversion and policy."""

import datetime

from oslotest import base

from nova_forcedown.api import microversion
from nova_forcedown.api.views import servers as views
from nova_forcedown.db import instances as db_instances
from nova_forcedown.objects import instance_fault
from nova_forcedown.objects import service as service_obj

CREATED = datetime.datetime(2026, 1, 2, 3, 4, 5)


def _record(**values):
    fields = dict.fromkeys(db_instances.InstanceRow._fields)
    fields.update(id=10, uuid='u1', display_name='vm', host='h1', node='h1',
                  vm_state='active', deleted=0, created_at=CREATED,
                  project_id='p1', user_metadata={})
    fields.update(values)
    return db_instances.InstanceRow(**fields)


def _parsed(text):
    return microversion.from_headers(
        {'OpenStack-API-Version': 'compute ' + text})


class TestServerViews(base.BaseTestCase):

    def _view(self, version, **options):
        return views.Servers(_parsed(version), views.ServerOptions(**options))

    def test_a_server_without_a_flavor_copy_embeds_an_empty_flavor(self):
        view = self._view('2.47').detail(_record(flavor=None))
        self.assertEqual({}, view['flavor'])

    def test_unknown_only_shows_unknown_and_nothing_else(self):
        down = service_obj.Service(host='h1', forced_down=True,
                                   disabled=False)
        stale = service_obj.Service(host='h2', forced_down=False,
                                    disabled=False)
        view = self._view('2.16', host_status='unknown-only',
                          services={'h1': down, 'h2': stale},
                          is_up=lambda service: False)
        self.assertNotIn('host_status', view.detail(_record()))
        self.assertEqual('UNKNOWN',
                         view.detail(_record(host='h2'))['host_status'])

    def test_host_id_hides_the_host_and_differs_by_project(self):
        self.assertEqual('', views.host_id('p1', None))
        self.assertNotEqual(views.host_id('p1', 'h1'),
                            views.host_id('p2', 'h1'))
        self.assertNotIn('h1', views.host_id('p1', 'h1'))

    def test_progress_only_in_statuses_that_have_one(self):
        self.assertEqual(0, self._view('2.1').detail(_record())['progress'])
        self.assertNotIn('progress', self._view('2.1').detail(
            _record(vm_state='stopped')))

    def test_deleted_record_shows_deleted(self):
        self.assertEqual('DELETED', self._view('2.1').detail(
            _record(deleted=10))['status'])

    def _faulted(self, code=500, details='Traceback: the disk is gone'):
        return {'u1': instance_fault.FaultRow(
            'u1', code, 'the disk is gone', details, 'h1', CREATED)}

    def test_a_fault_shows_while_the_server_is_in_error(self):
        view = self._view('2.1', faults=self._faulted())
        self.assertEqual(
            {'code': 500, 'message': 'the disk is gone',
             'created': '2026-01-02T03:04:05Z'},
            view.detail(_record(vm_state='error'))['fault'])
        self.assertNotIn('fault', view.detail(_record()))

    def test_a_500_faults_details_are_for_admins(self):
        admin = self._view('2.1', faults=self._faulted(), fault_details=True)
        self.assertEqual('Traceback: the disk is gone', admin.detail(
            _record(vm_state='error'))['fault']['details'])
        other = self._view('2.1', faults=self._faulted(code=404))
        self.assertEqual('Traceback: the disk is gone', other.detail(
            _record(vm_state='error'))['fault']['details'])
        empty = self._view('2.1', faults=self._faulted(details=''),
                           fault_details=True)
        self.assertNotIn('details', empty.detail(
            _record(vm_state='error'))['fault'])
