"""Real command-line processes on a temporary, file-backed SQLite database.

:class:`DatabaseFile` writes a configuration file with a short
report_interval and service_down_time; :class:`AgentProcess` runs
``nova-forcedown-compute`` against it and :func:`manage` runs
``nova-forcedown-manage``. Tests read the database with sqlite3, as an
operator would, never through the code under test.
"""

import os
import sqlite3
import sys

import fixtures
import sqlalchemy as sa

from nova_forcedown.db import schema
from tests import processes

wait_until = processes.wait_until

REPORT_INTERVAL = 1
SERVICE_DOWN_TIME = 3

_CONFIG = """[DEFAULT]
state_path = %(state_path)s
report_interval = %(report_interval)d
service_down_time = %(service_down_time)d

[database]
connection = %(connection)s
"""


class DatabaseFile(fixtures.Fixture):
    """A state directory, an SQLite file in it and a config file naming it.

    The schema is migrated to head unless ``migrate`` is false. ``options``
    are appended to the SQLite URL, e.g. ``timeout=0.1``.
    """

    def __init__(self, migrate=True, options='',
                 report_interval=REPORT_INTERVAL,
                 service_down_time=SERVICE_DOWN_TIME):
        super().__init__()
        self._migrate = migrate
        self._options = options
        self._report_interval = report_interval
        self._service_down_time = service_down_time

    def _setUp(self):
        self.state_path = self.useFixture(fixtures.TempDir()).path
        self.path = os.path.join(self.state_path, 'nova_forcedown.sqlite')
        url = 'sqlite:///' + self.path
        self.config_file = os.path.join(self.state_path, 'nova_forcedown.conf')
        with open(self.config_file, 'w') as config:
            config.write(_CONFIG % {
                'state_path': self.state_path, 'connection':
                url + ('?' + self._options if self._options else ''),
                'report_interval': self._report_interval,
                'service_down_time': self._service_down_time})
        if self._migrate:
            engine = sa.create_engine(url)
            schema.db_sync(engine)
            engine.dispose()

    def query(self, sql, *params):
        """Rows of ``sql`` as dicts."""
        connection = sqlite3.connect(self.path, timeout=10)
        connection.row_factory = sqlite3.Row
        try:
            return [dict(row) for row in connection.execute(sql, params)]
        finally:
            connection.close()

    def execute(self, sql, *params):
        connection = sqlite3.connect(self.path, timeout=10)
        try:
            with connection:
                connection.execute(sql, params)
        finally:
            connection.close()

    def services(self, **where):
        """Live service rows, by id, filtered by equal columns."""
        sql = 'SELECT * FROM services WHERE deleted = 0'
        for column in where:
            sql += ' AND "%s" = ?' % column
        return self.query(sql + ' ORDER BY id', *where.values())


def _command(module, config_file, args):
    return [sys.executable, '-m', module, '--config-file', config_file,
            *args]


class AgentProcess(processes.Process):
    """``nova-forcedown-compute`` running until stopped or the test ends."""

    def __init__(self, database, *args):
        super().__init__(_command('nova_forcedown.cmd.compute',
                                  database.config_file, args))

    def log(self):
        return self.output()

    def wait_for_log(self, text, timeout=30):
        return wait_until(lambda: text in self.log(), timeout)


def parse_table(text):
    """The rows of a bordered table, as dicts keyed by the header."""
    lines = [line for line in text.splitlines() if line.startswith('|')]
    split = [[cell.strip() for cell in line.strip('|').split('|')]
             for line in lines]
    return [dict(zip(split[0], row)) for row in split[1:]]


def manage(database, *args):
    """Run ``nova-forcedown-manage``; returns the CompletedProcess."""
    return processes.run(
        _command('nova_forcedown.cmd.manage', database.config_file, args),
        timeout=30)
