from oslo_db.sqlalchemy import test_fixtures

# Group the tests by database so each backend is provisioned and migrated
# once per test run rather than once per test.
load_tests = test_fixtures.optimize_package_test_loader(__file__)
