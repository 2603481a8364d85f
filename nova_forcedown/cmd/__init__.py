"""Console scripts. Each turns configuration and database problems into a
one-line error and a non-zero exit, never a traceback."""
