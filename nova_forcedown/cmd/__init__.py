"""Console scripts. Each turns configuration and database problems into a
one-line error and a non-zero exit, never a traceback.

eventlet's deprecation warning is silenced by the package itself
(nova_forcedown/__init__.py), for every entry point, not here.
"""
