"""The compute API's microversions: one table, one comment per version.

Only the versions that change a resource this API serves are named;
every other version in the range is accepted and behaves like the one
before it, as in Nova.
"""

import functools
import re

import microversion_parse
import webob.exc

SERVICE_TYPE = 'compute'
LEGACY_HEADER = 'X-OpenStack-Nova-API-Version'
STANDARD_HEADER = 'OpenStack-API-Version'

VERSIONS = [
    '2.1',    # The v2.1 API: services and hypervisors with state/status.
    '2.3',    # Server views: more OS-EXT-SRV-ATTR attributes for admins.
    '2.7',    # addTenantAccess to a public flavor is a 409.
    '2.9',    # Server views show locked.
    '2.11',   # PUT /os-services/force-down; forced_down in service views.
    '2.14',   # evacuate: no onSharedStorage; no adminPass in the answer.
    '2.16',   # Server views show host_status, where the policy allows.
    '2.19',   # Server views show description.
    '2.21',   # Instance actions of deleted servers can be read.
    '2.23',   # Migration views show migration_type.
    '2.26',   # Server views show tags.
    '2.28',   # Hypervisor cpu_info is an object, not a JSON string.
    '2.29',   # evacuate takes force: a host given is not checked.
    '2.32',   # POST /servers: a tag on a network and on a block device
              # mapping (the latter at 2.32 only, until 2.42).
    '2.33',   # Hypervisor list/detail paging: limit, marker, links.
    '2.37',   # POST /servers: networks required, or "auto" or "none".
    '2.38',   # An unknown status filter of a server listing is a 400.
    '2.41',   # Aggregate views show the aggregate's uuid.
    '2.42',   # POST /servers: tags on networks and block device
              # mappings again.
    '2.47',   # Server views embed the flavor's values, not a link to it.
    '2.51',   # Instance action events for every reader (no traceback).
    '2.52',   # POST /servers takes the server's tags.
    '2.53',   # UUID ids for services and hypervisors; PUT
              # /os-services/{uuid}; hypervisor_hostname_pattern and
              # with_servers; search and servers endpoints removed.
    '2.55',   # Flavor description: in views, on create, PUT /flavors/{id}.
    '2.57',   # POST /servers takes no personality files.
    '2.58',   # Instance actions show updated_at; their list pages
              # (limit, marker) and filters by changes-since.
    '2.59',   # Migrations show uuid; their list pages (limit, marker)
              # and filters by changes-since.
    '2.61',   # Flavor views show extra_specs (if the index rule allows).
    '2.62',   # Instance action events show hostId (and host, for
              # admins).
    '2.63',   # Server views show trusted_image_certificates.
    '2.66',   # Server, instance action and migration listings filter
              # by changes-before.
    '2.67',   # POST /servers: a volume_type on a block device mapping.
    '2.68',   # evacuate no longer takes force.
    '2.71',   # GET /servers/{id} shows server_groups.
    '2.73',   # Server views show locked_reason; listings filter by locked;
              # lock takes a locked_reason.
    '2.74',   # POST /servers takes host and hypervisor_hostname.
    '2.75',   # Strict query parameters on GET /os-services, /flavors and
              # server listings; servers: [] always present when
              # with_servers is requested; flavor swap 0 instead of "".
    '2.80',   # Migrations show user_id and project_id, and are filtered
              # by them.
    '2.81',   # POST /os-aggregates/{id}/images: cache images on the
              # aggregate's hosts.
    '2.83',   # Server listings: more filters for non-admins (vm_state,
              # task_state, availability_zone, ...).
    '2.84',   # Instance action events show details, for admins.
    '2.86',   # Flavor extra specs in the namespaces Nova knows are
              # validated.
    '2.88',   # Hypervisor views lose resource counts and cpu_info and gain
              # uptime; statistics and uptime endpoints removed.
    '2.90',   # OS-EXT-SRV-ATTR:hostname shown to every server reader.
    '2.94',   # POST /servers: the hostname may be a domain name.
    '2.95',   # An evacuated server ends stopped.
    '2.96',   # Server views show pinned_availability_zone.
    '2.98',   # Server views show the image's properties.
    '2.100',  # Server views show scheduler_hints.
    '2.102',  # Strict query parameters on GET /os-aggregates[/{id}] and
              # GET /servers/{id}; flavor listings filter by name;
              # flavor views lose rxtx_factor and
              # OS-FLV-DISABLED:disabled.
    '2.104',  # Nova's maximum; nothing in these resources changed since.
]

# The table parsed once, a name per version: handlers and views ask
# ``req.version.matches(microversion.V2_53)`` for "2.53 or later".
(V2_1, V2_3, V2_7, V2_9, V2_11, V2_14, V2_16, V2_19, V2_21, V2_23, V2_26,
 V2_28, V2_29, V2_32, V2_33, V2_37, V2_38, V2_41, V2_42, V2_47, V2_51, V2_52,
 V2_53, V2_55, V2_57, V2_58, V2_59, V2_61, V2_62, V2_63, V2_66, V2_67, V2_68,
 V2_71, V2_73, V2_74, V2_75, V2_80, V2_81, V2_83, V2_84, V2_86, V2_88, V2_90,
 V2_94, V2_95, V2_96, V2_98, V2_100, V2_102, V2_104) = (
    microversion_parse.parse_version_string(text) for text in VERSIONS)
MIN_VERSION = V2_1
MAX_VERSION = V2_104

# Nova's format. microversion_parse.parse_version_string alone would also
# take '2.01', '02.1', ' 2.1' or '-2.1', which Nova refuses with a 400.
_VERSION_FORMAT = re.compile(r'([1-9]\d*)\.([1-9]\d*|0)')
# A number of more digits than this (without leading zeros) is past
# MAX_VERSION: such a version is refused as out of range without int(),
# which refuses a string of more than 4300 digits.
_MOST_DIGITS = max(len(str(number)) for number in MAX_VERSION)


class InvalidVersion(ValueError):
    """The requested version string is malformed (400)."""


class UnsupportedVersion(ValueError):
    """The requested version is outside [MIN, MAX] (406).

    ``version`` is a Version, or the text of one with too many digits to
    be one.
    """

    def __init__(self, version):
        super().__init__(str(version))
        self.version = version


def from_headers(headers):
    """The microversion a request asks for; the minimum when it asks none.

    Parse it once per request: the result knows the API's range, so
    ``version.matches(V2_53)`` means "2.53 or later".
    """
    # Only the two headers that can carry it: microversion-parse folds
    # every header it is given.
    version_headers = {name: headers[name]
                       for name in (STANDARD_HEADER, LEGACY_HEADER)
                       if name in headers}
    text = microversion_parse.get_version(
        version_headers, service_type=SERVICE_TYPE,
        legacy_headers=[LEGACY_HEADER])
    version = _parse(text)
    if not version.matches(MIN_VERSION, MAX_VERSION):
        raise UnsupportedVersion(version)
    return _within_api_range(version)


def _parse(text):
    if text is None:
        return MIN_VERSION
    if text == 'latest':
        return MAX_VERSION
    match = _VERSION_FORMAT.fullmatch(text)
    if not match:
        raise InvalidVersion(
            'API Version String %s is of invalid format. Must be of format '
            'MajorNum.MinorNum.' % text)
    if max(len(number) for number in match.groups()) > _MOST_DIGITS:
        raise UnsupportedVersion(text)
    return microversion_parse.parse_version_string(text)


def _within_api_range(version):
    """A copy of version whose matches() bounds default to MIN and MAX."""
    bounded = microversion_parse.Version(*version)
    bounded.min_version = MIN_VERSION
    bounded.max_version = MAX_VERSION
    return bounded


# /v2 is 2.1 whatever the version headers say.
LEGACY_V2_VERSION = _within_api_range(MIN_VERSION)


def response_headers(version):
    """Both version headers and the Vary entries Nova sends."""
    return [
        (STANDARD_HEADER, '%s %s' % (SERVICE_TYPE, version)),
        (LEGACY_HEADER, str(version)),
        ('Vary', STANDARD_HEADER),
        ('Vary', LEGACY_HEADER),
    ]


NOT_FOUND = 'The resource could not be found.'


def removed_in(version):
    """Serve a handler below ``version`` only; from it on, answer 404."""
    def decorator(handler):
        @functools.wraps(handler)
        def wrapper(req):
            if req.version.matches(version):
                raise webob.exc.HTTPNotFound(explanation=NOT_FOUND)
            return handler(req)
        return wrapper
    return decorator


def added_in(version):
    """Serve a handler from ``version`` on; below it, answer 404."""
    def decorator(handler):
        @functools.wraps(handler)
        def wrapper(req):
            if not req.version.matches(version):
                raise webob.exc.HTTPNotFound(explanation=NOT_FOUND)
            return handler(req)
        return wrapper
    return decorator
