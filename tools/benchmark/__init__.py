"""Benchmark the compute API at cloud scale: listings, force-down, heartbeats.

    python -m tools.benchmark --hosts 1000,5000,10000 [--db-url URL]
                              [--json FILE]

Run it from a checkout. For each host count it seeds a fresh database with
N compute hosts, starts the real API server on a loopback port, measures
over HTTP, then measures heartbeats straight to the database; at the end
it prints one table, one column per host count, and writes the same
figures as JSON (``--json``). doc/source/admin/performance.rst says what
each figure means. ``--help`` lists the options that bound the work.

The modules, in the order a run uses them:

* ``seeding``: the database of each host count (``Database``) and its rows
  (``seed``: computes with nodes, some disabled, down or forced down; one
  server on each host and 100 on ``busy_host``, with their flavors);
* ``server``: the API under test on a free port, and its memory
  (``RssSampler``); the process it starts is ``counting_api``, the
  product's gunicorn server with ``statements.CountingMiddleware`` around
  the application, so that each response says how many SQL statements
  its request ran. A second one, with a raised ``[api] max_limit``, serves
  ``listings.UNPAGED_LISTINGS`` (every server in one page);
* ``clients``: keep-alive HTTP clients (``Client``), a request timed
  (``timed_request``), 8 clients at once (``concurrently``);
* ``latencies``: timing loops and the figures of a set of latencies;
* one module per measurement, each with a ``measure()`` that returns a
  dict of figures: ``listings``, ``force_down``, ``slow_clients``,
  ``heartbeats``;
* ``tooz_liveness``: the run of ``--tooz-hosts`` (off by default), on a
  database of its own: simulated agents heartbeat every host through the
  tooz driver while a checker polls an API on it; ``cpu`` reads the CPU
  seconds of the senders and of the servers (Redis, PostgreSQL);
* ``rpc_run``: the run of ``--rpc-transport-url`` (off by default): the
  stop and start and evacuation runs looked for and then cast, the RPC
  mode's hosts each an RPC server of its own (``one_host_agents``), and
  what idle agents cost the database in each mode (``idle_agents``);
* ``report``: the printed table, one section per measurement;
* ``cli``: the options and ``run_one``, which calls each measurement.

To measure a new resource (aggregates, servers, an evacuation):

1. give it rows in ``seeding.seed``, proportional to the hosts;
2. for another listing, add a row to ``listings.LISTINGS`` and its floor
   query; for anything else, add a module with a ``measure()`` that sends
   its requests with ``clients`` and sums them up with
   ``latencies.summary``;
3. call it in ``cli.run_one`` (in ``_through_the_api`` if it talks to the
   API, so that the memory sampler sees it) and store its figures under a
   key of the run; add the options that bound it to ``cli.parse_args``;
4. print them with a section function in ``report.SECTIONS``;
5. say what they mean in doc/source/admin/performance.rst.

A measurement of another servicegroup driver follows ``heartbeats``: agent
processes forked from this one, reporting through the driver itself.
"""
