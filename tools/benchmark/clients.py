"""HTTP clients of the API under test: one keep-alive connection each."""

import concurrent.futures
import http.client
import json
import time

from tools.benchmark import statements as sql_statements

# noauth2: user admin of project "openstack" (hex), an admin.
TOKEN = 'admin:6f70656e737461636b'


def request_parts(version=None, body=None):
    """(headers, body bytes or None) of an admin's JSON request."""
    headers = {'X-Auth-Token': TOKEN, 'Accept': 'application/json'}
    if version:
        headers['OpenStack-API-Version'] = 'compute ' + version
    data = None
    if body is not None:
        data = json.dumps(body).encode()
        headers['Content-Type'] = 'application/json'
    return headers, data


# Concurrent clients of the "8 clients" runs.
CLIENTS = 8


class Client:
    """One keep-alive HTTP/1.1 connection (http.client: little client CPU)."""

    def __init__(self, port):
        self.port = port
        self.connection = http.client.HTTPConnection('127.0.0.1', port,
                                                     timeout=120)
        self.sql_ms = None

    def request(self, method, path, version=None, body=None):
        """(status, statements or None, body bytes); reconnects once."""
        headers, data = request_parts(version, body)
        for attempt in (1, 2):
            try:
                self.connection.request(method, '/v2.1' + path
                                        if path != '/' else path,
                                        body=data, headers=headers)
                response = self.connection.getresponse()
                payload = response.read()
                break
            except (http.client.HTTPException, ConnectionError):
                self.connection.close()
                if attempt == 2:
                    raise
        statements = response.getheader(sql_statements.HEADER)
        # Milliseconds the server's database driver took for them.
        self.sql_ms = float(response.getheader(
            sql_statements.SQL_TIME_HEADER, 'nan'))
        return (response.status,
                int(statements) if statements is not None else None,
                payload)

    def close(self):
        self.connection.close()


def timed_request(client, request, latencies, failures):
    """Send (method, path, version, body); record its latency or failure.

    Returns the SQL statement count the server answered, or None.
    """
    start = time.perf_counter()
    try:
        status, count, payload = client.request(*request)
    except (OSError, http.client.HTTPException) as exc:
        failures.append(repr(exc))
        return None
    latencies.append(time.perf_counter() - start)
    if status != 200:
        failures.append('%s %s' % (status, payload[:200]))
    return count


def concurrently(loop):
    """``loop(client)`` for each of CLIENTS clients at once, in threads.

    Each loop returns (latencies, failures, SQL statement counts); the
    result is theirs merged, and the seconds they took together.
    """
    start = time.perf_counter()
    with concurrent.futures.ThreadPoolExecutor(CLIENTS) as pool:
        outcomes = list(pool.map(loop, range(CLIENTS)))
    elapsed = time.perf_counter() - start
    return ([value for outcome in outcomes for value in outcome[0]],
            [value for outcome in outcomes for value in outcome[1]],
            set().union(*[outcome[2] for outcome in outcomes]),
            elapsed)
