"""The request path of an API call: which files it crosses, in what order.

    python -m tools.request_path [--json] [--cold]

Run it from a checkout with the project installed. It builds the real WSGI
application in this process (``nova_forcedown.wsgi.api``, noauth2, a
temporary SQLite file migrated by the project's own db sync at start-up),
registers three compute hosts with one server each through the real agent
(``nova-forcedown-compute --driver fake``, stopped once the servers are
listed), then sends each call of :func:`calls.plan` through the whole
paste pipeline with webob and traces it with :func:`sys.setprofile`,
keeping only the Python functions of the ``nova_forcedown`` package.

For each call it prints the files crossed, in the order first entered,
their number, and the number of layer switches: two consecutive traced
calls in different top-level parts of the package (``api``, ``objects``,
``db``...). Nothing names a module of the package: the parts and files are
read off the frames, so the figures follow the code as it moves.

By default each traced call follows an identical warm-up call, so that
what a server does once (statements built and cached, rules loaded) is
left out, as in a server that has run for a while; ``--cold`` traces the
first call.
"""
