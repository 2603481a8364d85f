"""The calls traced, each after a warm-up of the same kind.

The deployment has three hosts with one server each: the first fails
(forced down, its server evacuated), the second is where the server goes
(the scheduler picks it, the only host still up), the third fails first,
so that the warm-ups do what the traced calls do. Last, a server of the
second host is shown: the plainest server request, for scale.
"""

import collections

from tests.fixtures import call_trace

HOSTS = 3


class Call(collections.namedtuple('Call', 'name method path version body '
                                          'path_args')):
    """A request; ``path`` as the documentation shows it (``{id}``)."""

    @property
    def url(self):
        return self.path.format(**self.path_args)


def force_down(host):
    return Call('force-down', 'PUT', '/v2.1/os-services/force-down', '2.11',
                {'host': host, 'binary': 'nova-compute', 'forced_down': True},
                {})


def evacuation(server):
    return Call('evacuation', 'POST', '/v2.1/servers/{id}/action', '2.29',
                {'evacuate': {}}, {'id': server})


def server_show(server):
    return Call('server-show', 'GET', '/v2.1/servers/{id}', '2.29', None,
                {'id': server})


def plan(deployment):
    """[(warm-up, traced call)] on ``deployment``'s hosts, in order."""
    failed, destination, warm = deployment.hosts
    shown = deployment.servers[destination][0]
    return [
        (force_down(warm), force_down(failed)),
        (evacuation(deployment.servers[warm][0]),
         evacuation(deployment.servers[failed][0])),
        (server_show(shown), server_show(shown)),
    ]


class CallFailed(Exception):
    pass


def send(deployment, call):
    """The status of ``call``, which must succeed."""
    status, body = deployment.request(call.method, call.url, call.version,
                                      call.body)
    if status >= 400:
        raise CallFailed('%s %s at %s answered %d: %s' % (
            call.method, call.url, call.version, status, body))
    return status


def traced(deployment, call):
    """``call``'s request, answer and path, as a dict."""
    with call_trace.Tracer() as tracer:
        status = send(deployment, call)
    summary = call_trace.summarize(tracer.calls, tracer.callers)
    return dict(summary._asdict(), name=call.name,
                method=call.method, path=call.path,
                microversion=call.version, body=call.body, status=status)
