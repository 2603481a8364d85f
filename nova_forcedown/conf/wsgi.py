"""[wsgi] options: the API server and its paste pipeline."""

from oslo_config import cfg

GROUP = 'wsgi'
MAX_REQUEST_BODY_SIZE = 114688

WSGI_OPTS = [
    cfg.StrOpt('api_paste_config', default='api-paste.ini',
               help='Paste deploy file; a relative name is looked up next '
                    'to the configuration files, then in the package.'),
    cfg.HostAddressOpt('host', default='127.0.0.1',
                       help='Address the API server binds to.'),
    cfg.PortOpt('port', default=8774, help='Port the API server binds to.'),
    cfg.IntOpt('workers', default=1, min=1,
               help='Number of API worker processes.'),
    cfg.IntOpt('threads', default=8, min=1,
               help='Threads per API worker process, each serving one '
                    'request at a time.'),
    cfg.IntOpt('client_socket_timeout', default=60, min=1,
               help='Seconds a client connection may send nothing, between '
                    'requests or in the middle of one, before the server '
                    'closes it. Requests are read in full before a thread '
                    'serves them, so slow clients hold no thread meanwhile.'),
    cfg.IntOpt('max_connections', default=1000, min=1,
               help='Open client connections each worker process accepts; '
                    'beyond it, new ones wait in the listen backlog.'),
    cfg.IntOpt('max_request_body_size', default=MAX_REQUEST_BODY_SIZE,
               min=1,
               help='Largest request body in bytes; larger ones get 413.'),
]


def register_opts(conf):
    conf.register_opts(WSGI_OPTS, group=GROUP)


def list_opts():
    return {GROUP: WSGI_OPTS}
