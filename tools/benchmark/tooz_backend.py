"""The coordination backend of the tooz run: its namespace, its figures.

The run keeps to a tooz namespace of its own (:func:`namespaced`) and
deletes its keys at the end (:func:`forget`); on Redis it also counts the
server's commands and samples its CPU.
"""

import urllib.parse

import redis

from tools.benchmark import cpu

# Commands of Redis whose calls over the window are reported.
REDIS_COMMANDS = ('psetex', 'watch', 'exec', 'hset', 'hkeys', 'mget',
                  'info')


def namespaced(backend_url, namespace):
    """``backend_url`` with tooz's ``namespace`` option: keys of this run."""
    parts = urllib.parse.urlsplit(backend_url)
    query = urllib.parse.parse_qsl(parts.query)
    query.append(('namespace', namespace))
    return parts._replace(query=urllib.parse.urlencode(query)).geturl()


def redis_client(backend_url):
    """A client of the backend when it is a Redis server, else None."""
    parts = urllib.parse.urlsplit(backend_url)
    if parts.scheme != 'redis':
        return None
    return redis.Redis(host=parts.hostname, port=parts.port or 6379)


def redis_commands(backend_url):
    """{command: calls so far} of a Redis backend (all its clients)."""
    client = redis_client(backend_url)
    if client is None:
        return None
    try:
        stats = client.info('commandstats')
    finally:
        client.close()
    return {name: stats.get('cmdstat_' + name, {}).get('calls', 0)
            for name in REDIS_COMMANDS}


def backend_sampler(backend_url):
    """A CPU sampler of the Redis server (on this machine), else None."""
    client = redis_client(backend_url)
    if client is None:
        return None
    try:
        pid = client.info('server')['process_id']
    finally:
        client.close()
    return cpu.Sampler(cpu.pid_matcher(pid))


def forget(backend_url, namespace):
    """Delete the run's keys from a Redis backend."""
    client = redis_client(backend_url)
    if client is None:
        return
    try:
        batch = []
        for key in client.scan_iter(match=namespace + '*', count=10000):
            batch.append(key)
            if len(batch) >= 10000:
                client.delete(*batch)
                batch = []
        if batch:
            client.delete(*batch)
    finally:
        client.close()
