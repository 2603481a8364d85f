"""A server that answers every HTTP request at once with the same bytes.

    python -m tools.benchmark.canned_http

It prints its port, then serves one keep-alive connection: against it, a
client's request costs only the client and the loopback socket, the part
of the HTTP path that no change to the API server can take away.
"""

import socket
import sys

# An answer the size of the API's to a one-row read: its headers and a
# small JSON body.
BODY = b'{"services": [' + b'0' * 380 + b']}'
ANSWER = (b'HTTP/1.1 200 OK\r\n'
          b'Content-Type: application/json\r\n'
          b'Content-Length: %d\r\n'
          b'OpenStack-API-Version: compute 2.53\r\n'
          b'X-OpenStack-Nova-API-Version: 2.53\r\n'
          b'Vary: OpenStack-API-Version, X-OpenStack-Nova-API-Version\r\n'
          b'X-Openstack-Request-Id: req-00000000-0000-0000-0000-000000000000'
          b'\r\n'
          b'X-Compute-Request-Id: req-00000000-0000-0000-0000-000000000000'
          b'\r\n\r\n' % len(BODY)) + BODY
END_OF_HEADERS = b'\r\n\r\n'


def serve(listener):
    """Answer each request of the first connection, until it closes."""
    connection, _ = listener.accept()
    connection.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
    pending = b''
    with connection:
        while True:
            data = connection.recv(65536)
            if not data:
                return
            pending += data
            while END_OF_HEADERS in pending:
                pending = pending.split(END_OF_HEADERS, 1)[1]
                connection.sendall(ANSWER)


def main():
    with socket.socket() as listener:
        listener.bind(('127.0.0.1', 0))
        listener.listen(1)
        sys.stdout.write('%d\n' % listener.getsockname()[1])
        sys.stdout.flush()
        serve(listener)


if __name__ == '__main__':
    main()
