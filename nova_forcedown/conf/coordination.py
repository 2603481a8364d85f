"""[coordination] options: the backend of the tooz servicegroup driver.

Named as the OpenStack services that use tooz name them, so one backend
URL can serve them all.
"""

import urllib.parse

from oslo_config import cfg

GROUP = 'coordination'

DEFAULT_BACKEND_URL = 'redis://127.0.0.1:6379'

COORDINATION_OPTS = [
    cfg.StrOpt('backend_url', default=DEFAULT_BACKEND_URL, secret=True,
               help='URL of the coordination backend that the tooz '
                    'servicegroup driver ([DEFAULT] servicegroup_driver = '
                    'tooz) keeps service heartbeats in, and that '
                    'nova-forcedown-pulse sends its host\'s pulse to: any '
                    'URL tooz supports, such as redis://, '
                    'redis+sentinel://, etcd3+http://, zookeeper:// or '
                    'memcached://, with the driver\'s own options in its '
                    'query string. The driver sets membership_timeout to '
                    '[DEFAULT] service_down_time itself, the pulse to '
                    '[pulse] ttl.'),
    cfg.IntOpt('database_report_interval', min=1,
               help='Seconds between two heartbeats that a compute agent '
                    'on the tooz driver also writes to the database '
                    '(services.last_seen_up, updated_at and report_count), '
                    'besides its heartbeats to the coordination backend '
                    'every report_interval. They keep last_seen_up '
                    'meaningful, tell the agent that its service is forced '
                    'down, keep services up on API nodes still on the db '
                    'driver, and keep them up while the backend is '
                    'unreachable. Unset (the default): half of '
                    'service_down_time. A value of service_down_time or '
                    'more lightens the database further but gives up the '
                    'last two: see the install guide.'),
]


def shown_url(url):
    """A tooz backend URL for log lines: no credentials, no options."""
    parts = urllib.parse.urlsplit(url)
    where = parts.hostname or ''
    if ':' in where:
        where = '[%s]' % where
    if parts.port:
        where += ':%d' % parts.port
    return urllib.parse.urlunsplit((parts.scheme, where, parts.path, '', ''))


def register_opts(conf):
    conf.register_opts(COORDINATION_OPTS, group=GROUP)


def database_report_interval(conf):
    """Seconds between an agent's database heartbeats on the tooz driver."""
    interval = conf.coordination.database_report_interval
    if interval is None:
        return max(conf.service_down_time // 2, conf.report_interval)
    return interval


def list_opts():
    return {GROUP: COORDINATION_OPTS}
