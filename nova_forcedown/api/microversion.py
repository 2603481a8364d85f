"""The compute API's microversions: one table, one comment per version.

Only the versions that change os-services or os-hypervisors are named;
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
    '2.11',   # PUT /os-services/force-down; forced_down in service views.
    '2.28',   # Hypervisor cpu_info is an object, not a JSON string.
    '2.33',   # Hypervisor list/detail paging: limit, marker, links.
    '2.53',   # UUID ids for services and hypervisors; PUT
              # /os-services/{uuid}; hypervisor_hostname_pattern and
              # with_servers; search and servers endpoints removed.
    '2.75',   # Strict query parameters on GET /os-services; servers: []
              # always present when with_servers is requested.
    '2.88',   # Hypervisor views lose resource counts and cpu_info and gain
              # uptime; statistics and uptime endpoints removed.
    '2.104',  # Nova's maximum; nothing in these resources changed since.
]

_VERSION_RE = re.compile(r'^([1-9]\d*)\.([1-9]\d*|0)$')


class Version(tuple):
    """A (major, minor) microversion that compares as a tuple."""

    def __new__(cls, major, minor):
        return super().__new__(cls, (major, minor))

    @classmethod
    def parse(cls, text):
        """Parse 'X.Y'; raise ValueError for anything else."""
        match = _VERSION_RE.match(text)
        if not match:
            raise ValueError(text)
        return cls(int(match.group(1)), int(match.group(2)))

    def __str__(self):
        return '%d.%d' % self

    def matches(self, min_version, max_version=None):
        """Whether min_version <= self <= max_version (strings 'X.Y')."""
        if self < Version.parse(min_version):
            return False
        return max_version is None or self <= Version.parse(max_version)


MIN_VERSION = Version.parse(VERSIONS[0])
MAX_VERSION = Version.parse(VERSIONS[-1])


class InvalidVersion(ValueError):
    """The requested version string is malformed (400)."""


class UnsupportedVersion(ValueError):
    """The requested version is outside [MIN, MAX] (406)."""

    def __init__(self, version):
        super().__init__(str(version))
        self.version = version


def requested_text(headers):
    """The version text a request asks for, or None."""
    return microversion_parse.get_version(
        headers, service_type=SERVICE_TYPE, legacy_headers=[LEGACY_HEADER])


def from_headers(headers):
    """The microversion a request asks for; the minimum when it asks none."""
    text = requested_text(headers)
    if text is None:
        return MIN_VERSION
    if text == 'latest':
        return MAX_VERSION
    try:
        version = Version.parse(text)
    except ValueError:
        raise InvalidVersion(
            'API Version String %s is of invalid format. Must be of format '
            'MajorNum.MinorNum.' % text)
    if not MIN_VERSION <= version <= MAX_VERSION:
        raise UnsupportedVersion(version)
    return version


def response_headers(version):
    """Both version headers and the Vary entries Nova sends."""
    return [
        (STANDARD_HEADER, '%s %s' % (SERVICE_TYPE, version)),
        (LEGACY_HEADER, str(version)),
        ('Vary', STANDARD_HEADER),
        ('Vary', LEGACY_HEADER),
    ]


NOT_FOUND = 'The resource could not be found.'


def available(min_version, max_version=None):
    """Serve a handler only within [min_version, max_version]; else 404."""
    def decorator(handler):
        @functools.wraps(handler)
        def wrapper(req):
            if not req.version.matches(min_version, max_version):
                raise webob.exc.HTTPNotFound(explanation=NOT_FOUND)
            return handler(req)
        return wrapper
    return decorator
