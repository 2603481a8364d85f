"""The ``database`` backend of oslo.middleware's /healthcheck.

``[healthcheck] backends = database`` (the default here) makes
/healthcheck run ``SELECT 1`` on the API's own engine, so a load balancer
takes an API out of rotation while its database is unreachable: 200 ``OK``
while it answers, 503 ``database unavailable`` while it does not. The check
is bounded by the engine's own timeouts ([database] pool_timeout and the
driver's connect timeout); no traceback or URL is ever shown.
"""

from oslo_log import log as logging
from oslo_middleware.healthcheck import pluginbase
import sqlalchemy as sa
from nova_forcedown.db import engine as db_engine


LOG = logging.getLogger(__name__)

NAME = 'database'


class DatabaseHealthcheck(pluginbase.HealthcheckBaseExtension):
    """Healthy when the project's database answers ``SELECT 1``."""

    def healthcheck(self, server_port):
        try:
            with db_engine.get_engine().connect() as connection:
                connection.execute(sa.text('SELECT 1'))
        except Exception as exc:  # noqa: any failure means unhealthy
            text = str(exc).strip()
            LOG.warning('Health check: the database is unavailable: %s',
                        text.splitlines()[0] if text else type(exc).__name__)
            return pluginbase.HealthcheckResult(
                available=False, reason='database unavailable',
                details=type(exc).__name__)
        return pluginbase.HealthcheckResult(available=True, reason='OK')
