"""Flavor views: pure functions of a flavor, the microversion and links.

The brief view (``GET /flavors``) is id, name and links (and the
description from 2.55); every other answer is the detail view, whose
fields change with the microversion as in Nova.
"""

import re

from nova_forcedown.api import microversion

# The trailing version segment of an endpoint URL: /v2.1, /v2.
_VERSION_SEGMENT = re.compile(r'/v[0-9]+(\.[0-9]+)?/?$')


class Links:
    """The self and bookmark links of one request's flavors.

    ``base`` is the API's URL with its version (``.../v2.1``), ``project``
    the ``/{project_id}`` segment when the request URL had one, else ''.
    The bookmark is the same URL without the version, as in Nova.
    """

    def __init__(self, base, project):
        self.self_base = '%s%s/flavors/' % (base, project)
        self.bookmark_base = '%s%s/flavors/' % (
            _VERSION_SEGMENT.sub('', base), project)

    def __call__(self, flavorid):
        return [{'rel': 'self', 'href': self.self_base + flavorid},
                {'rel': 'bookmark', 'href': self.bookmark_base + flavorid}]


def brief(flavor, version, links):
    view = {'id': flavor.flavorid, 'name': flavor.name,
            'links': links(flavor.flavorid)}
    if version.matches(microversion.V2_55):
        view['description'] = flavor.description
    return view


def detail(flavor, version, links, with_extra_specs=False):
    """``with_extra_specs``: from 2.61, when the index rule lets the caller."""
    view = brief(flavor, version, links)
    view.update({
        'ram': flavor.memory_mb,
        'disk': flavor.root_gb,
        'vcpus': flavor.vcpus,
        'OS-FLV-EXT-DATA:ephemeral': flavor.ephemeral_gb,
        'os-flavor-access:is_public': flavor.is_public,
        # Nova shows no swap as "" until 2.75.
        'swap': (flavor.swap if version.matches(microversion.V2_75)
                 else flavor.swap or ''),
    })
    if not version.matches(microversion.V2_102):
        view['rxtx_factor'] = flavor.rxtx_factor or ''
        view['OS-FLV-DISABLED:disabled'] = flavor.disabled
    if with_extra_specs and version.matches(microversion.V2_61):
        view['extra_specs'] = dict(flavor.extra_specs)
    return view
