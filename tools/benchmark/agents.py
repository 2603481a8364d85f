"""Real compute agents on the benchmark's database.

``nova-forcedown-compute`` with the fake driver, for the measurements
that need hosts to act.
"""

import os
import subprocess
import sys
import time

import sqlalchemy as sa

from tools.benchmark import server as bench_server


class Agent:
    """One agent process of ``hosts`` hosts, ``instances`` servers each.

    The hosts are named ``<prefix><i>``. ``module``: the agent's command,
    the product's or the simulation of ``one_host_agents``; ``ready``:
    the line its log shows once it serves, when registering is not all.
    """

    def __init__(self, api, prefix, hosts, instances, *options,
                 module='nova_forcedown.cmd.compute', ready=None):
        self.prefix = prefix
        self.servers = hosts * instances
        self.log_path = os.path.join(os.path.dirname(api.config),
                                     'agent-%s.log' % prefix.rstrip('-'))
        self.command = [
            sys.executable, '-m', module,
            '--config-file', api.config, '--driver', 'fake', '--hosts',
            str(hosts), '--instances', str(instances), '--host-prefix',
            prefix, *options]
        self.process = None
        self._ready = ready
        self._log = None

    def start(self, engine, hosts_needed=0):
        """Start it; the uuids of its servers once it registered them.

        With ``hosts_needed``, also wait for that many of its hosts'
        services (an agent without servers).
        """
        self._log = open(self.log_path, 'wb')
        self.process = subprocess.Popen(
            self.command, cwd=bench_server.CHECKOUT, stdout=self._log,
            stderr=subprocess.STDOUT, stdin=subprocess.DEVNULL)
        deadline = time.monotonic() + 300
        while time.monotonic() < deadline:
            if self.process.poll() is not None:
                raise RuntimeError('the agent exited:\n' + self.log())
            uuids = server_uuids(engine, self.prefix)
            if (len(uuids) == self.servers and
                    _services(engine, self.prefix) >= hosts_needed and
                    (self._ready is None or self._ready in self.log())):
                return uuids
            time.sleep(0.5)
        raise RuntimeError('the agent did not register:\n' + self.log())

    def log(self):
        with open(self.log_path, 'rb') as log:
            return log.read().decode('utf-8', 'replace')

    def stop(self):
        if self.process is not None and self.process.poll() is None:
            self.process.terminate()
            self.process.wait(30)
        if self._log is not None:
            self._log.close()


def server_uuids(engine, prefix):
    """The live servers on hosts named ``<prefix>...``, in creation order."""
    with engine.connect() as connection:
        return [row.uuid for row in connection.execute(sa.text(
            "SELECT uuid FROM instances WHERE host LIKE :prefix AND "
            "deleted = 0 ORDER BY id"), {'prefix': prefix + '%'})]


def _services(engine, prefix):
    with engine.connect() as connection:
        return connection.execute(sa.text(
            "SELECT count(*) FROM services WHERE host LIKE :prefix AND "
            "deleted = 0"), {'prefix': prefix + '%'}).scalar()
