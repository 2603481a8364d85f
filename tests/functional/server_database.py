"""A real database of its own for tests that run server processes.

:class:`ServerDatabase` provisions a fresh, uniquely named database on
PostgreSQL or MariaDB through oslo.db's provisioning (the server named by
``OS_TEST_DBAPI_ADMIN_CONNECTION``, else oslo.db's ``openstack_citest``
account on localhost), migrates it unless told not to, and drops it at the
end. The API and agent processes of a test reach it by URL, so nothing is
shared with the enginefacade of the test process. Tests skip when the server
is absent, unless ``NOVA_FORCEDOWN_REQUIRE_DATABASES`` is set.
"""

import os
import uuid

import fixtures
from oslo_db import exception as db_exc
from oslo_db.sqlalchemy import provision
import sqlalchemy as sa
import testtools

from nova_forcedown.db import models
from nova_forcedown.db import schema


class ServerDatabase(fixtures.Fixture):
    """A migrated database named ``nf_<random>`` on ``backend``.

    ``url`` reaches it directly; :meth:`url_via` gives the same URL on
    another loopback port (a proxy in front of the server).
    """

    def __init__(self, backend='postgresql', migrate=True):
        super().__init__()
        self.backend_name = backend
        self._migrate = migrate

    def _setUp(self):
        try:
            backend = provision.Backend.backend_for_database_type(
                self.backend_name)
        except db_exc.BackendNotAvailable as exc:
            if os.environ.get('NOVA_FORCEDOWN_REQUIRE_DATABASES'):
                raise
            raise testtools.TestCase.skipException(str(exc))
        self.name = 'nf_%s' % uuid.uuid4().hex[:12]
        backend.create_named_database(self.name)
        self.addCleanup(backend.drop_named_database, self.name)
        self.url = backend.provisioned_database_url(self.name)
        self.engine = sa.create_engine(self.url, poolclass=sa.pool.NullPool)
        self.addCleanup(self.engine.dispose)
        if self._migrate:
            schema.db_sync(self.engine)

    def url_via(self, port):
        """The database URL, at 127.0.0.1:``port`` instead."""
        return self.url.set(host='127.0.0.1', port=port).render_as_string(
            hide_password=False)

    @property
    def url_text(self):
        return self.url.render_as_string(hide_password=False)

    def query(self, sql, **params):
        """Rows of ``sql`` as dicts, read directly from the server."""
        with self.engine.connect() as connection:
            return [dict(row._mapping) for row in
                    connection.execute(sa.text(sql), params)]

    def services(self):
        """Live nova-compute service rows by host."""
        table = models.Service.__table__
        query = sa.select(table).where(table.c.deleted == 0,
                                       table.c.binary == 'nova-compute')
        with self.engine.connect() as connection:
            return {row.host: dict(row._mapping)
                    for row in connection.execute(query)}
