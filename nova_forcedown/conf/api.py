"""[api] options: authentication, paging and legacy extensions."""

from oslo_config import cfg

GROUP = 'api'

API_OPTS = [
    cfg.StrOpt('auth_strategy', default='keystone',
               choices=[('keystone', 'Keystone tokens (keystonemiddleware)'),
                        ('http_basic', 'HTTP basic auth against an htpasswd '
                                       'file with bcrypt hashes'),
                        ('noauth2', 'No authentication; development and '
                                    'tests only, loopback binds only')],
               help='How API requests are authenticated. Selects the '
                    'pipeline of that name in api-paste.ini.'),
    cfg.StrOpt('http_basic_auth_user_file', default='/etc/htpasswd',
               help='htpasswd file used when auth_strategy is http_basic.'),
    cfg.ListOpt('http_basic_admin_users', default=['admin'],
                help='Users of the htpasswd file who are administrators '
                     '(role admin); the others get roles member and '
                     'reader.'),
    cfg.IntOpt('max_limit', default=1000, min=1,
               help='Largest number of items one listing page returns.'),
    cfg.ListOpt('disabled_extensions', default=[],
                help='Aliases of legacy /v2 extensions to disable, e.g. '
                     'os-hypervisor-status.'),
    cfg.BoolOpt('enable_instance_password', default=True,
                help='Whether an evacuation answered below microversion '
                     '2.14 shows the server\'s admin password (the one '
                     'given, or one made up when the disk is not on shared '
                     'storage), as Nova does.'),
    cfg.StrOpt('compute_link_prefix',
               help='Base URL used in links instead of the request host, '
                    'e.g. https://cloud.example.com:8774.'),
]


def register_opts(conf):
    conf.register_opts(API_OPTS, group=GROUP)


def list_opts():
    return {GROUP: API_OPTS}
