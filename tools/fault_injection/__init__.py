"""Fault injection: evacuation and create storms while hosts fail.

    python -m tools.fault_injection [--duration 120] [--seed 0]
        [--hosts 8] [--clients 16] [--db-url URL] [--coordination redis]
        [--messaging rabbit] [--json]

Run it from a checkout with the project installed. It creates a fresh
database (a temporary SQLite file, or one of its own on the server that
``--db-url`` names), starts ``nova-forcedown-api`` (noauth2, loopback)
and one ``nova-forcedown-compute --driver fake`` agent per simulated
host, each host running a few servers of a big flavor, every process
reaching the database (and Redis, with ``--coordination redis``, and
RabbitMQ, with ``--messaging rabbit``) through a relay that the tool
cuts. Then, for ``--duration`` seconds, client threads evacuate the
servers of fenced hosts at random microversions and destinations, create
servers (some naming a host) and delete those they created, try to force
hosts up and list, while the injector crashes agents, fences hosts
(SIGKILL, power off, force down) and repairs them, kills destinations
just after an evacuation to them was accepted, and cuts the database,
Redis and the broker. The invariants (:mod:`.invariants`) are checked
after every step and every half second, and once more after the final
recovery; every answer is judged (:mod:`.client`), and every create
against the hosts forced down meanwhile (:mod:`.storm`). It prints the
counts and exits 1 on any violation.

The relay is the tool's own (:mod:`.proxy`): the tests keep theirs
(tests/fixtures/tcp_proxy.py), and neither imports the other.
"""
