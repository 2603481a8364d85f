"""POST /servers bodies, one constant per microversion window, as Nova's.

Each constant validates the whole body: ``server`` (required) and the
scheduler hints under either of their two names. A window is a copy of
the one before it with its change. ``schema(version)`` picks the window
of a /v2.1 request; a /v2 request takes ``CREATE_V20`` (the handler asks
``req.legacy_v2``, as the aggregates handlers do).

Nova checks IP addresses and base64 with format checkers this API does
not register; here they are patterns that accept exactly what Nova's
checks accept (and refuse, with a 400, the non-ASCII user_data that
Nova's base64 check fails on with a 500).
"""

import copy

from nova_forcedown.api import microversion
from nova_forcedown.api import validation


def _decimal_up_to(limit):
    """A regex of the decimal numbers 1 to ``limit``, leading zeros too.

    Nova compares a string of digits with a schema's bounds as a number;
    a schema can only say it with a pattern.
    """
    text = str(limit)
    forms = [text]
    if len(text) > 1:
        forms.append('[1-9][0-9]{0,%d}' % (len(text) - 2))
    for position, digit in enumerate(text):
        lowest = '1' if position == 0 else '0'
        if digit > lowest:
            forms.append('%s[%s-%s][0-9]{%d}' % (
                text[:position], lowest, chr(ord(digit) - 1),
                len(text) - position - 1))
    return '0*(?:%s)' % '|'.join(forms)


# Python's ipaddress rules, which Nova's ipv4 and ipv6 formats apply: no
# leading zero in an octet, no zone index, '::' for at least one group,
# an IPv4 address as the last two groups. \Z: no final newline either.
_OCTET = '(?:25[0-5]|2[0-4][0-9]|1[0-9]{2}|[1-9]?[0-9])'
_IPV4 = r'%s(?:\.%s){3}' % (_OCTET, _OCTET)
_GROUP = '[0-9a-fA-F]{1,4}'


def _ipv6_forms():
    forms = ['%s(?::%s){7}' % (_GROUP, _GROUP),
             '(?:%s:){6}%s' % (_GROUP, _IPV4)]
    for before in range(8):
        left = ('%s(?::%s){%d}' % (_GROUP, _GROUP, before - 1)
                if before else '')
        after = 7 - before
        if after:
            forms.append('%s::(?:%s(?::%s){0,%d})?' % (
                left, _GROUP, _GROUP, after - 1))
        else:
            forms.append(left + '::')
        if after >= 2:
            forms.append('%s::(?:%s:){0,%d}%s' % (
                left, _GROUP, after - 2, _IPV4))
    return forms


ipv4 = {'type': 'string', 'pattern': r'^%s\Z' % _IPV4}
ipv6 = {'type': 'string',
        'pattern': r'^(?:%s)\Z' % '|'.join(_ipv6_forms())}
ip_address = {'type': 'string', 'oneOf': [ipv4, ipv6]}


# What Nova's base64 check accepts: Python's lenient decoding, which
# skips every ASCII character outside the alphabet, ignores '=' where it
# cannot end the data and everything after the '=' that does, and only
# refuses data characters that do not fill their last group of four.
_SKIPPED = r'(?:(?![A-Za-z0-9+/=])[\x00-\x7f])'
_SKIPPED_OR_PAD = r'(?:(?![A-Za-z0-9+/])[\x00-\x7f])'
_DATA = '[A-Za-z0-9+/]'
_TWO = '{any}*{d}{any}*{d}'.format(any=_SKIPPED_OR_PAD, d=_DATA)
_THREE = '{two}{s}*(?:={s}*)?{d}'.format(two=_TWO, s=_SKIPPED, d=_DATA)
_REST = r'[\x00-\x7f]*'
base64_string = {
    'type': 'string',
    'pattern': '^(?:{three}{s}*{d})*(?:{any}*|{two}{s}*={s}*={rest}|'
               '{three}{s}*={rest})\\Z'.format(
                   three=_THREE, two=_TWO, s=_SKIPPED, d=_DATA,
                   any=_SKIPPED_OR_PAD, rest=_REST),
}

# min_count, max_count: an integer, or a string of digits, of at least 1.
# '$' as Nova's: a final newline passes (int() reads it).
positive_integer = {'type': ['integer', 'string'], 'minimum': 1,
                    'pattern': '^0*[1-9][0-9]*$'}

# A volume's size in GiB, up to the largest integer column.
_MAX_VOLUME_SIZE = 0x7FFFFFFF
volume_size = {'type': ['integer', 'string'], 'minimum': 1,
               'maximum': _MAX_VOLUME_SIZE,
               'pattern': '^%s$' % _decimal_up_to(_MAX_VOLUME_SIZE)}

# A server's or a device's tag: 1 to 60 characters, no '/' and no ','.
MAX_TAG_LENGTH = 60
MAX_TAGS = 50
tag = {'type': 'string', 'minLength': 1, 'maxLength': MAX_TAG_LENGTH,
       'pattern': '^[^,/]*$'}

# 2.90 - 2.93: a hostname is one DNS label (RFC 952 and 1123).
hostname = {'type': 'string', 'minLength': 2, 'maxLength': 63,
            'pattern': '^[a-zA-Z0-9][a-zA-Z0-9-]*[a-zA-Z0-9]$'}

_string_255 = {'type': 'string', 'maxLength': 255}

# ------------------------------------------------------------- the parts

_NETWORK = {
    'type': 'object',
    'properties': {
        'uuid': {'type': 'string'},
        'port': dict(validation.uuid, type=['string', 'null']),
        'fixed_ip': ip_address,
    },
    'additionalProperties': False,
}

_LEGACY_BDM = {
    'type': 'object',
    'properties': {
        'virtual_name': _string_255,
        'volume_id': validation.uuid,
        'snapshot_id': validation.uuid,
        'volume_size': volume_size,
        'device_name': {'type': 'string', 'minLength': 1, 'maxLength': 255,
                        'pattern': '^[a-zA-Z0-9._/-]*$'},
        'delete_on_termination': validation.boolean,
        'no_device': {},
        # A MEDIUMTEXT column.
        'connection_info': {'type': 'string', 'maxLength': 16777215},
    },
    'additionalProperties': False,
}

_BDM_V2 = copy.deepcopy(_LEGACY_BDM)
_BDM_V2['properties'].update({
    'source_type': {'type': 'string',
                    'enum': ['volume', 'image', 'snapshot', 'blank']},
    'destination_type': {'type': 'string', 'enum': ['local', 'volume']},
    'uuid': {'type': 'string', 'minLength': 1, 'maxLength': 255,
             'pattern': '^[a-zA-Z0-9._-]*$'},
    'image_id': validation.uuid,
    'guest_format': _string_255,
    'device_type': _string_255,
    'disk_bus': _string_255,
    # null too, as the v2 API took it.
    'boot_index': {'type': ['integer', 'string', 'null'],
                   'pattern': '^-?[0-9]+$'},
})

_SERVER_IDS = {'type': 'array', 'items': validation.uuid}

# The hints Nova's filters read are checked; any other passes, for the
# filters an operator adds.
_SCHEDULER_HINTS = {
    'type': 'object',
    'properties': {
        'group': {'oneOf': [validation.uuid, _SERVER_IDS]},
        'different_host': {'oneOf': [validation.uuid, _SERVER_IDS]},
        # A lone string here is not checked, as in Nova.
        'same_host': {'type': ['string', 'array'],
                      'items': validation.uuid},
        # A JSON query, as text or already an object.
        'query': {'type': ['string', 'object']},
        'target_cell': validation.name,
        'different_cell': {'type': ['string', 'array'],
                           'items': {'type': 'string'}},
        'build_near_host_ip': ip_address,
        'cidr': {'type': 'string', 'pattern': '^/[0-9a-f.:]+$'},
    },
    'additionalProperties': True,
}

# ----------------------------------------------------------- the windows

# 2.1 - 2.18.
CREATE = {
    'type': 'object',
    'properties': {
        'server': {
            'type': 'object',
            'properties': {
                'name': validation.name,
                # '' only makes sense when booting from a volume; the
                # handler refuses it otherwise.
                'imageRef': {'oneOf': [validation.uuid,
                                       {'type': 'string', 'maxLength': 0}]},
                'flavorRef': {'type': ['string', 'integer'],
                              'minLength': 1},
                'adminPass': {'type': 'string'},
                'metadata': validation.metadata,
                'networks': {'type': 'array', 'items': _NETWORK},
                'OS-DCF:diskConfig': {'type': 'string',
                                      'enum': ['AUTO', 'MANUAL']},
                'accessIPv4': ipv4,
                'accessIPv6': ipv6,
                'personality': {
                    'type': 'array',
                    'items': {
                        'type': 'object',
                        'properties': {'path': {'type': 'string'},
                                       'contents': base64_string},
                        'additionalProperties': False,
                    },
                },
                'availability_zone': validation.name,
                'block_device_mapping': {'type': 'array',
                                         'items': _LEGACY_BDM},
                'block_device_mapping_v2': {'type': 'array',
                                            'items': _BDM_V2},
                'config_drive': validation.boolean,
                'key_name': validation.name,
                'min_count': positive_integer,
                'max_count': positive_integer,
                'return_reservation_id': validation.boolean,
                'security_groups': {
                    'type': 'array',
                    'items': {
                        'type': 'object',
                        # A group's name or its UUID.
                        'properties': {'name': validation.name},
                        'additionalProperties': False,
                    },
                },
                'user_data': dict(base64_string, maxLength=65535),
            },
            'required': ['name', 'flavorRef'],
            'additionalProperties': False,
        },
        'os:scheduler_hints': _SCHEDULER_HINTS,
        'OS-SCH-HNT:scheduler_hints': _SCHEDULER_HINTS,
    },
    'required': ['server'],
    'additionalProperties': False,
}


def _server(schema):
    """The properties of a window's ``server`` object."""
    return schema['properties']['server']['properties']


# /v2: names (the server's, its zone's, its key pair's, its security
# groups') may have spaces around them, and user_data may be null.
CREATE_V20 = copy.deepcopy(CREATE)
for _key in ('name', 'availability_zone', 'key_name'):
    _server(CREATE_V20)[_key] = validation.name_with_leading_trailing_spaces
_server(CREATE_V20)['security_groups']['items']['properties']['name'] = (
    validation.name_with_leading_trailing_spaces)
_server(CREATE_V20)['user_data'] = dict(
    _server(CREATE)['user_data'], type=['string', 'null'])

# 2.19 - 2.31: a description.
CREATE_V219 = copy.deepcopy(CREATE)
_server(CREATE_V219)['description'] = validation.description

# 2.32 only: a tag on a network and on a block device mapping.
CREATE_V232 = copy.deepcopy(CREATE_V219)
_server(CREATE_V232)['networks']['items']['properties']['tag'] = tag
_server(CREATE_V232)['block_device_mapping_v2']['items']['properties'][
    'tag'] = tag

# 2.33 - 2.36: Nova added the device tags for 2.32 alone; the networks'
# tag stayed, the block device mappings' went until 2.42.
CREATE_V233 = copy.deepcopy(CREATE_V232)
del _server(CREATE_V233)['block_device_mapping_v2']['items']['properties'][
    'tag']

# 2.37 - 2.41: networks is required, a list of networks whose uuid is a
# UUID (and without a tag, until 2.42), or "auto" or "none".
CREATE_V237 = copy.deepcopy(CREATE_V233)
CREATE_V237['properties']['server']['required'].append('networks')
_server(CREATE_V237)['networks'] = {'oneOf': [
    {'type': 'array', 'items': dict(_NETWORK, properties=dict(
        _NETWORK['properties'], uuid=validation.uuid))},
    {'type': 'string', 'enum': ['auto', 'none']},
]}

# 2.42 - 2.51: tags on networks and block device mappings again.
CREATE_V242 = copy.deepcopy(CREATE_V237)
_server(CREATE_V242)['networks']['oneOf'][0]['items']['properties'][
    'tag'] = tag
_server(CREATE_V242)['block_device_mapping_v2']['items']['properties'][
    'tag'] = tag

# 2.52 - 2.56: the server's tags.
CREATE_V252 = copy.deepcopy(CREATE_V242)
_server(CREATE_V252)['tags'] = {'type': 'array', 'items': tag,
                                'maxItems': MAX_TAGS}

# 2.57 - 2.62: no personality files.
CREATE_V257 = copy.deepcopy(CREATE_V252)
del _server(CREATE_V257)['personality']

# 2.63 - 2.66: trusted image certificates, 1 to 50 distinct IDs (or null).
CREATE_V263 = copy.deepcopy(CREATE_V257)
_server(CREATE_V263)['trusted_image_certificates'] = {
    'type': ['array', 'null'], 'minItems': 1, 'maxItems': 50,
    'uniqueItems': True, 'items': {'type': 'string', 'minLength': 1}}

# 2.67 - 2.73: a volume type on a block device mapping.
CREATE_V267 = copy.deepcopy(CREATE_V263)
_server(CREATE_V267)['block_device_mapping_v2']['items']['properties'][
    'volume_type'] = {'type': ['string', 'null'], 'maxLength': 255}

# 2.74 - 2.89: the host and node an admin asks for.
CREATE_V274 = copy.deepcopy(CREATE_V267)
_server(CREATE_V274).update(host=validation.fqdn,
                            hypervisor_hostname=validation.fqdn)

# 2.90 - 2.93: the guest's hostname, one DNS label.
CREATE_V290 = copy.deepcopy(CREATE_V274)
_server(CREATE_V290)['hostname'] = hostname

# 2.94 and later: the hostname may be a fully qualified domain name.
CREATE_V294 = copy.deepcopy(CREATE_V290)
_server(CREATE_V294)['hostname'] = validation.fqdn

# The /v2.1 windows after the first, newest first: each serves from its
# version until the next.
WINDOWS = (
    (microversion.V2_94, CREATE_V294),
    (microversion.V2_90, CREATE_V290),
    (microversion.V2_74, CREATE_V274),
    (microversion.V2_67, CREATE_V267),
    (microversion.V2_63, CREATE_V263),
    (microversion.V2_57, CREATE_V257),
    (microversion.V2_52, CREATE_V252),
    (microversion.V2_42, CREATE_V242),
    (microversion.V2_37, CREATE_V237),
    (microversion.V2_33, CREATE_V233),
    (microversion.V2_32, CREATE_V232),
    (microversion.V2_19, CREATE_V219),
)


def schema(version):
    """The body schema of POST /servers at ``version`` (/v2.1)."""
    for first, window in WINDOWS:
        if version.matches(first):
            return window
    return CREATE
