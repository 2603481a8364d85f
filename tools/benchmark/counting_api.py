"""The API server the benchmark measures: nova-forcedown-api, counting SQL.

    python -m tools.benchmark.counting_api --config-file FILE

The server of the ``nova-forcedown-api`` command (nova_forcedown/cmd/api.py:
the same gunicorn application, worker class and settings from ``[wsgi]``)
serving the same paste application, wrapped in
``statements.CountingMiddleware`` so that each response says how many SQL
statements its request ran. The schema must already be migrated.
"""

import sys

from oslo_log import log as logging

from nova_forcedown.api import deploy
from nova_forcedown.cmd import api as api_cmd
from nova_forcedown import conf as nf_conf
from nova_forcedown.db import engine as db_engine
from nova_forcedown.db import schema
from tools.benchmark import statements


def main(argv):
    conf = nf_conf.make_conf(argv)
    logging.setup(conf, 'nova_forcedown')
    schema.prepare(conf)
    application = statements.CountingMiddleware(deploy.load_app(conf),
                                                db_engine.get_engine())
    options = api_cmd.gunicorn_options(conf, conf.wsgi.host, conf.wsgi.port)
    api_cmd.Server(application, options).run()


if __name__ == '__main__':
    main(sys.argv[1:])
