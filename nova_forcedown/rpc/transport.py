"""The RPC transport: whether there is one, and how a context travels.

``[DEFAULT] transport_url`` (oslo.messaging's option, RabbitMQ in
production) turns RPC on: the API casts each task to its host's agent,
and agents listen for those casts. Without it, agents find their tasks by
looking in the database, as the development set-up does.
"""

from oslo_config import cfg

from nova_forcedown import context as nf_context
from nova_forcedown import messaging


def register_opts(conf):
    messaging.register_transport_opts(conf)


def enabled(conf):
    """Whether ``conf`` names a transport for RPC.

    oslo.messaging's default (``rabbit://``, a broker on localhost) does
    not count: only a URL an operator set turns RPC on.
    """
    register_opts(conf)
    location = conf.get_location('transport_url').location
    return (location is not cfg.Locations.opt_default and
            bool(conf.transport_url))


def shown_url(conf):
    """The transport URL without credentials, for log lines."""
    oslo_messaging = messaging.import_messaging()
    url = oslo_messaging.TransportURL.parse(conf, conf.transport_url)
    hosts = ','.join('%s:%s' % (host.hostname, host.port or '')
                     for host in url.hosts) or 'localhost'
    return '%s://%s/%s' % (url.transport, hosts.rstrip(':'),
                           url.virtual_host or '')


def get_transport(conf):
    return messaging.import_messaging().get_rpc_transport(conf)


def serializer():
    """A serializer that carries this project's RequestContext."""
    oslo_messaging = messaging.import_messaging()

    class ContextSerializer(oslo_messaging.NoOpSerializer):

        def serialize_context(self, context):
            return context.to_dict()

        def deserialize_context(self, context):
            return nf_context.RequestContext.from_dict(context)

    return ContextSerializer()
