"""A service's entity tag: what a client sees of it, as one strong ETag.

The tag covers every field of the service view from microversion 2.53 on
(the ``GET`` and ``PUT /os-services/{uuid}`` answers, a listed service):
the id (the UUID), host, binary, status, state (up or down as judged
now), disabled_reason, forced_down, zone and updated_at. So anything that
changes one of them changes the tag: a force-down or its clearing, a
disable or enable, a new reason, a heartbeat (updated_at; and state,
when it brings the host back up), a heartbeat that stops coming (state,
once ``service_down_time`` passes), a move to another zone. Nothing else
does: the tag of an unchanged service is the same at every request.

A client sends the tag back in ``If-Match`` so that its write is refused
(412) when the service is no longer as it read it.
"""

import hashlib

from oslo_serialization import jsonutils

from nova_forcedown.objects import base as objects_base
from nova_forcedown.servicegroup import status
from nova_forcedown.servicegroup import zones


def service_tag(service, is_up, zone):
    """The strong entity tag, quoted, of ``service`` as a client sees it.

    ``is_up``: whether it is up now; ``zone``: the zone it is shown in.
    The fields are rendered as the service view renders them, then
    hashed: the tag says nothing of the service but whether it changed.
    """
    shown = [service.uuid, service.host, service.binary,
             status.status(service), status.state(is_up),
             service.disabled_reason, service.forced_down, zone,
             objects_base.timestamp(service.updated_at)]
    digest = hashlib.sha256(jsonutils.dump_as_bytes(shown)).hexdigest()
    return '"%s"' % digest[:32]


def stored_tag(conf, is_up, context, service):
    """:func:`service_tag` of a ``service`` row read in ``context``.

    Its zone is read in the same transaction; ``is_up(service)`` is the
    servicegroup's judgement, which the caller hands down. What a change
    made on a condition (``If-Match``) compares with the tags its client
    read, on the row that change locked.
    """
    zone = zones.ServiceZones.load(context, conf,
                                   hosts=[service.host]).zone(service)
    return service_tag(service, is_up(service), zone)
