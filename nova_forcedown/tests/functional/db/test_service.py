"""Service objects on real SQLite, PostgreSQL and MariaDB databases."""

from nova_forcedown import exception
from nova_forcedown.objects import service as service_obj
from nova_forcedown.tests import fixtures as nf_fixtures


def make_service(context, host='compute1', binary='nova-compute', **fields):
    service = service_obj.Service(context, host=host, binary=binary,
                                  topic='compute', report_count=0,
                                  disabled=False, forced_down=False,
                                  version=1, **fields)
    service.create()
    return service


class ServiceTestsMixin:

    def test_new_service_is_not_forced_down(self):
        service = make_service(self.context)
        loaded = service_obj.Service.get_by_id(self.context, service.id)
        self.assertFalse(loaded.forced_down)
        self.assertEqual(0, loaded.report_count)

    def test_stale_heartbeat_save_keeps_admin_force_down(self):
        service = make_service(self.context)
        agent_copy = service_obj.Service.get_by_id(self.context, service.id)

        admin_copy = service_obj.Service.get_by_host_and_binary(
            self.context, 'compute1', 'nova-compute')
        admin_copy.forced_down = True
        admin_copy.disabled = True
        admin_copy.disabled_reason = 'fenced'
        admin_copy.save()

        agent_copy.report_count += 1
        agent_copy.save()

        stored = service_obj.Service.get_by_id(self.context, service.id)
        self.assertTrue(stored.forced_down)
        self.assertTrue(stored.disabled)
        self.assertEqual('fenced', stored.disabled_reason)
        self.assertEqual(1, stored.report_count)
        self.assertIsNotNone(stored.last_seen_up)

    def test_heartbeat_after_force_down_leaves_it_forced_down(self):
        service = make_service(self.context)
        agent_copy = service_obj.Service.get_by_id(self.context, service.id)
        service.forced_down = True
        service.save()

        agent_copy.record_heartbeat()

        self.assertTrue(agent_copy.forced_down)
        stored = service_obj.Service.get_by_id(self.context, service.id)
        self.assertTrue(stored.forced_down)
        self.assertEqual(1, stored.report_count)

    def test_duplicate_host_and_binary_is_refused(self):
        make_service(self.context)
        self.assertRaises(exception.ServiceExists, make_service, self.context)


nf_fixtures.backend_test_cases(ServiceTestsMixin, globals())
