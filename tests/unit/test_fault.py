"""Domain errors become Nova's JSON faults through one table."""

import inspect

from oslo_serialization import jsonutils
from oslotest import base

from nova_forcedown.api import fault
from nova_forcedown import exception

# Errors that stop a process at start-up and never reach a request.
STARTUP_ONLY = (exception.DatabaseNotMigrated,
                exception.DatabaseNewerThanCode,
                exception.SchemaRevisionRefused,
                exception.PolicyFileInvalid,
                exception.DatabaseConnectionUnusable,
                exception.DatabaseURLInvalid,
                exception.DatabaseDialectUnknown,
                exception.DatabaseDriverMissing,
                exception.DatabaseDriverNotOurs)


def _domain_errors():
    return [cls for _, cls in inspect.getmembers(exception, inspect.isclass)
            if issubclass(cls, exception.NovaForcedownException) and
            cls is not exception.NovaForcedownException and
            cls not in STARTUP_ONLY]


class TestDomainFaults(base.BaseTestCase):

    def test_every_request_error_has_a_status(self):
        for cls in _domain_errors():
            with self.subTest(error=cls.__name__):
                resp = fault.from_domain_exception(cls('text'))
                self.assertIsNotNone(resp, '%s maps to no HTTP status; '
                                     'derive it from a category of '
                                     'api.fault.STATUS_OF' % cls.__name__)

    def test_statuses_and_fault_names_are_novas(self):
        cases = [
            (exception.PolicyNotAuthorized(action='a'), 403, 'forbidden'),
            (exception.HostNotFound(host='h'), 404, 'itemNotFound'),
            (exception.MarkerNotFound(marker='m'), 400, 'badRequest'),
            (exception.ComputeServiceUnavailable(host='h'), 400,
             'badRequest'),
            (exception.ServiceHostsInstances(), 409, 'conflictingRequest'),
            # Nova has no 412, and names what it has no name for so.
            (exception.ServiceChanged(service_id='u', tags='"t"'), 412,
             'computeFault'),
            (exception.DatabaseUnavailable(reason='r'), 503,
             'serviceUnavailable'),
        ]
        for error, status, name in cases:
            with self.subTest(error=type(error).__name__):
                resp = fault.from_domain_exception(error)
                self.assertEqual(status, resp.status_code)
                self.assertEqual({name: {'code': status,
                                         'message': str(error)}},
                                 jsonutils.loads(resp.body))
