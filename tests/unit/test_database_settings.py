"""How db.engine prepares a server database's connection parameters."""

import testtools

from nova_forcedown import conf as nf_conf
from nova_forcedown.db import engine as db_engine


def _parameters(url):
    conf = nf_conf.make_conf([], default_config_files=[],
                             default_config_dirs=[])
    conf.set_override('connection', url, group='database')
    db_engine._server_timeouts(conf)
    return conf.database.connection_parameters


class TestConnectionParameters(testtools.TestCase):

    def test_mysql_talks_utf8mb4_unless_told_otherwise(self):
        self.assertEqual(
            'connect_timeout=5&charset=utf8mb4',
            _parameters('mysql+pymysql://u:p@127.0.0.1/nova_forcedown'))
        self.assertEqual('connect_timeout=5', _parameters(
            'mysql+pymysql://u:p@127.0.0.1/nova_forcedown?charset=utf8'))

    def test_postgresql_gets_a_connect_timeout_only(self):
        self.assertEqual('connect_timeout=5', _parameters(
            'postgresql+psycopg2://u@127.0.0.1/nova_forcedown'))
        self.assertEqual('', _parameters(
            'postgresql+psycopg2://u@127.0.0.1/nova_forcedown'
            '?connect_timeout=1'))
