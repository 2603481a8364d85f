"""[wsgi] options: the API server and its paste pipeline."""

from oslo_config import cfg

GROUP = 'wsgi'

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
    cfg.IntOpt('max_request_body_size', default=114688, min=1,
               help='Largest request body in bytes; larger ones get 413.'),
]


def register_opts(conf):
    conf.register_opts(WSGI_OPTS, group=GROUP)


def list_opts():
    return {GROUP: WSGI_OPTS}
