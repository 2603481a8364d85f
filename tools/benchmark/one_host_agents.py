"""Many agents of one host each, simulated in one process for the broker.

    python -m tools.benchmark.one_host_agents --config-file FILE \\
        --hosts N --host-prefix P --instances 1

What a cloud of N hosts, each with its own agent, shows the broker: N
RPC servers, each listening as its host (``compute.<host>``, one
connection and one listening thread each), and every service's
``rpc_server`` its own host, so the API casts to each host's queue as it
would in production. Behind them one fake agent carries the tasks out
(one task runner, one heartbeat loop): the database sees one agent, the
broker N. Runs until SIGTERM, then exits at once.
"""

import os
import signal
import sys
import threading

from oslo_log import log as logging

from nova_forcedown.cmd import compute as compute_cmd
from nova_forcedown.compute import agent as compute_agent
from nova_forcedown.compute import manager
from nova_forcedown import conf as nf_conf
from nova_forcedown.db import engine as db_engine
from nova_forcedown import notifications
from nova_forcedown import objects


def main(argv=None):
    conf = nf_conf.make_conf(sys.argv[1:] if argv is None else argv,
                             register_cli=compute_cmd.CLI_OPTS)
    logging.setup(conf, 'nova_forcedown')
    objects.register_all()
    db_engine.configure(conf)
    notifications.configure(conf)
    agent = compute_agent.Agent(conf, compute_agent.load_driver(conf))
    agent.register()
    for service in agent.services:
        service.rpc_server = service.host
        service.save()
    agent.start()
    listeners = [manager.Listener(conf, service.host,
                                  agent.task_runner).start()
                 for service in agent.services[1:]]
    print('listening as %d hosts' % (len(listeners) + 1), flush=True)
    stop = threading.Event()
    signal.signal(signal.SIGTERM, lambda signum, frame: stop.set())
    stop.wait()
    agent.stop()
    # Stopping a thousand RPC servers one by one takes minutes; the
    # broker drops their consumers when the process's connections close.
    os._exit(0)


if __name__ == '__main__':
    sys.exit(main())
