"""POST /servers bodies: Nova's fields, window by window."""

from oslotest import base
import webob.exc

from nova_forcedown.api import microversion
from nova_forcedown.api.schemas import server_create
from nova_forcedown.api import validation

IMAGE = '70a599e0-31e7-49b7-b260-868f441e862b'
NETWORK = 'ff608d40-75e9-48cb-b745-77bb55b5eaf2'
PORT = '9a3b6a6e-2c3b-4a0f-8c4e-0e8f1e1c2d3a'
VOLUME = 'cf3d7e4e-1d6b-4bd0-9b0d-5a2b5f6e7c8d'
NAME_RULE = ("An invalid 'name' value was provided. The name must be: "
             "printable characters. Can not start or end with whitespace.")


def _at(text):
    return microversion.from_headers(
        {microversion.STANDARD_HEADER: 'compute %s' % text})


def _body(version='2.1', **server):
    """A minimal body valid at ``version``, with ``server``'s changes."""
    fields = {'name': 'web', 'flavorRef': '1', 'imageRef': IMAGE}
    if _at(version).matches(microversion.V2_37):
        fields['networks'] = 'auto'
    fields.update(server)
    return {'server': fields}


class _SchemaTestCase(base.BaseTestCase):

    def assertAccepted(self, body, version='2.1'):
        schema = server_create.schema(_at(version))
        self.assertIs(body, validation.validate(body, schema))

    def assertRefused(self, body, version='2.1'):
        """400 for ``body`` at ``version``; the explanation for more."""
        error = self.assertRaises(
            webob.exc.HTTPBadRequest, validation.validate, body,
            server_create.schema(_at(version)))
        return error.explanation

    def assertWindow(self, first, **server):
        """``server``'s fields refused before ``first``, accepted from it."""
        before = '2.%d' % (int(first.split('.')[1]) - 1)
        self.assertRefused(_body(before, **server), before)
        self.assertAccepted(_body(first, **server), first)


class TestWindows(_SchemaTestCase):

    def test_windows_are_newest_first_and_after_2_1(self):
        # Out of order, a window would never be picked.
        firsts = [first for first, window in server_create.WINDOWS]
        self.assertEqual(sorted(set(firsts), reverse=True), firsts)
        self.assertGreater(firsts[-1], microversion.V2_1)

    def test_each_window_starts_at_its_version(self):
        older = server_create.CREATE
        for first, window in reversed(server_create.WINDOWS):
            before = '%d.%d' % (first[0], first[1] - 1)
            self.assertIs(older, server_create.schema(_at(before)))
            self.assertIs(window, server_create.schema(_at(str(first))))
            older = window
        self.assertIs(older, server_create.schema(_at('latest')))

    def test_a_minimal_body_passes_in_every_window(self):
        for version in ('2.1', '2.18', '2.19', '2.32', '2.33', '2.36',
                        '2.37', '2.42', '2.52', '2.57', '2.63', '2.67',
                        '2.74', '2.90', '2.94', '2.104'):
            self.assertAccepted(_body(version), version)

    def test_a_full_body_passes_at_the_latest(self):
        body = _body(
            'latest', adminPass='secret', metadata={'role': 'db'},
            networks=[{'uuid': NETWORK, 'fixed_ip': '192.0.2.7',
                       'tag': 'nic1'}, {'port': PORT}],
            accessIPv4='192.0.2.8', accessIPv6='2001:db8::8',
            availability_zone='nova', key_name='ops',
            user_data='I2Nsb3VkLWNvbmZpZwo=', config_drive=True,
            security_groups=[{'name': 'default'}], min_count='2',
            max_count=3, return_reservation_id='false',
            block_device_mapping_v2=[{
                'boot_index': '0', 'uuid': IMAGE, 'source_type': 'image',
                'destination_type': 'volume', 'volume_size': 10,
                'delete_on_termination': True, 'tag': 'root',
                'volume_type': None}],
            description=None, tags=['a', 'b'],
            trusted_image_certificates=['cert-1'], host='compute-1',
            hypervisor_hostname='compute-1.example.org',
            hostname='web-1.example.org')
        body['server']['OS-DCF:diskConfig'] = 'AUTO'
        body['os:scheduler_hints'] = {'group': NETWORK,
                                      'same_host': [IMAGE], 'my_hint': 1}
        body['OS-SCH-HNT:scheduler_hints'] = {'different_host': IMAGE}
        self.assertAccepted(body, 'latest')


class TestRequiredAndUnknown(_SchemaTestCase):

    def test_name_and_flavor_are_required(self):
        for field in ('name', 'flavorRef'):
            body = _body()
            del body['server'][field]
            self.assertIn("'%s' is a required property" % field,
                          self.assertRefused(body))
        self.assertEqual("'server' is a required property",
                         self.assertRefused({}))

    def test_an_image_is_not_required(self):
        body = _body()
        del body['server']['imageRef']
        self.assertAccepted(body)

    def test_networks_are_required_from_2_37(self):
        body = _body('2.36')
        self.assertAccepted(body, '2.36')
        self.assertIn("'networks' is a required property",
                      self.assertRefused(body, '2.37'))

    def test_unknown_fields_are_refused(self):
        self.assertIn("'flavor' was unexpected",
                      self.assertRefused(_body(flavor='1')))
        body = _body()
        body['scheduler_hints'] = {}
        self.assertIn("'scheduler_hints' was unexpected",
                      self.assertRefused(body))


class TestNames(_SchemaTestCase):

    def test_spaces_around_a_name_are_refused_on_v2_1(self):
        self.assertEqual(NAME_RULE, self.assertRefused(_body(name=' web')))
        self.assertEqual(NAME_RULE,
                         self.assertRefused(_body(key_name='ops ')))

    def test_spaces_around_a_name_are_allowed_on_v2(self):
        body = _body(name=' web ', availability_zone=' nova',
                     security_groups=[{'name': 'default '}])
        validation.validate(body, server_create.CREATE_V20)
        self.assertRefused(body)

    def test_user_data_may_be_null_on_v2_only(self):
        body = _body(user_data=None)
        validation.validate(body, server_create.CREATE_V20)
        self.assertRefused(body)


class TestValues(_SchemaTestCase):

    def test_counts_are_integers_or_digits_of_at_least_one(self):
        for count in (1, 3, '1', '07'):
            self.assertAccepted(_body(min_count=count, max_count=count))
        for count in (0, '0', '00', -1, '-1', '', 'x', '1.5', 1.5, True):
            self.assertRefused(_body(max_count=count))

    def test_an_image_is_a_uuid_or_empty(self):
        self.assertAccepted(_body(imageRef=''))
        for image in ('http://glance/images/' + IMAGE, 'abc', None):
            self.assertRefused(_body(imageRef=image))

    def test_a_flavor_is_a_nonempty_string_or_an_integer(self):
        for flavor in (1, 'm1.small', 'http://nova/flavors/1'):
            self.assertAccepted(_body(flavorRef=flavor))
        for flavor in ('', None, 1.5):
            self.assertRefused(_body(flavorRef=flavor))

    def test_disk_config_is_auto_or_manual(self):
        self.assertAccepted({'server': dict(_body()['server'], **{
            'OS-DCF:diskConfig': 'MANUAL'})})
        self.assertRefused({'server': dict(_body()['server'], **{
            'OS-DCF:diskConfig': 'auto'})})

    def test_access_addresses_follow_python_ipaddress(self):
        for address in ('192.0.2.1', '0.0.0.0', '255.255.255.255'):
            self.assertAccepted(_body(accessIPv4=address))
        for address in ('192.0.2.01', '192.0.2.256', '192.0.2',
                        '192.0.2.1\n', '::1'):
            self.assertRefused(_body(accessIPv4=address))
        for address in ('::', '::1', '2001:DB8::1', '1:2:3:4:5:6:7::',
                        '::ffff:192.0.2.1', '1:2:3:4:5:6:192.0.2.1'):
            self.assertAccepted(_body(accessIPv6=address))
        for address in ('1::2::3', 'fe80::1%eth0', '1:2:3:4:5:6:7:8:9',
                        '12345::1', '1:2:3:4:5:6:7::8', '192.0.2.1',
                        '::ffff:192.0.2.01', ':1:2:3:4:5:6:7'):
            self.assertRefused(_body(accessIPv6=address))

    def test_a_fixed_ip_is_either_family(self):
        for address in ('192.0.2.1', '2001:db8::1'):
            self.assertAccepted(_body(networks=[{'uuid': NETWORK,
                                                 'fixed_ip': address}]))
        self.assertRefused(_body(networks=[{'fixed_ip': 'host-1'}]))

    def test_user_data_is_base64_as_python_decodes_it(self):
        # Line breaks and stray characters are skipped, and anything
        # after the padding is ignored, as in Nova.
        for data in ('', 'I2Nsb3VkLWNvbmZpZwo=', 'I2Ns\nb3Vk\n', 'QQ==',
                     'QQ==junk', 'QUI=', 'Q Q = ='):
            self.assertAccepted(_body(user_data=data))
        # Nova answers 500 for a character beyond ASCII; here it is a 400.
        for data in ('QQ', 'Q', 'QUJDR', 'QQ=', 'QUJD\u00e9', 'QQ==\u00e9',
                     5):
            self.assertRefused(_body(user_data=data))
        # Up to 65535 characters, whatever they decode to.
        self.assertAccepted(_body(user_data='QUJD' * 16383 + '\n\n\n'))
        too_long = self.assertRefused(_body(user_data='QUJD' * 16384))
        self.assertTrue(too_long.endswith('is too long'))

    def test_metadata_values_are_strings(self):
        self.assertAccepted(_body(metadata={'a b:c': 'x'}))
        self.assertRefused(_body(metadata={'a': 1}))
        self.assertRefused(_body(metadata={'a/b': 'x'}))

    def test_booleans_take_nova_spellings(self):
        for value in (True, 'yes', 'On', '0'):
            self.assertAccepted(_body(config_drive=value,
                                      return_reservation_id=value))
        self.assertRefused(_body(config_drive='maybe'))

    def test_security_groups_are_named(self):
        self.assertAccepted(_body(security_groups=[{'name': NETWORK}]))
        self.assertRefused(_body(security_groups=['default']))
        self.assertRefused(_body(security_groups=[{'id': NETWORK}]))


class TestNetworks(_SchemaTestCase):

    def test_auto_and_none_from_2_37(self):
        for choice in ('auto', 'none'):
            self.assertRefused(_body('2.36', networks=choice), '2.36')
            self.assertAccepted(_body('2.37', networks=choice), '2.37')
        self.assertRefused(_body('2.37', networks='all'), '2.37')

    def test_a_network_uuid_is_checked_from_2_37(self):
        networks = [{'uuid': 'not-a-uuid'}]
        self.assertAccepted(_body('2.36', networks=networks), '2.36')
        self.assertRefused(_body('2.37', networks=networks), '2.37')

    def test_a_port_is_a_uuid_or_null(self):
        self.assertAccepted(_body(networks=[{'port': None}]))
        self.assertRefused(_body(networks=[{'port': 'eth0'}]))

    def test_a_network_tag_at_2_32_to_2_36_and_from_2_42(self):
        networks = [{'uuid': NETWORK, 'tag': 'nic1'}]
        for version in ('2.32', '2.36', '2.42'):
            self.assertAccepted(_body(version, networks=networks), version)
        for version in ('2.31', '2.37', '2.41'):
            self.assertRefused(_body(version, networks=networks), version)

    def test_an_unknown_network_field_is_refused(self):
        self.assertRefused(_body(networks=[{'uuid': NETWORK,
                                            'subnet': NETWORK}]))


class TestBlockDevices(_SchemaTestCase):

    def _bdm(self, **fields):
        return dict({'boot_index': 0, 'uuid': VOLUME,
                     'source_type': 'volume', 'destination_type': 'volume'},
                    **fields)

    def test_a_boot_volume_passes(self):
        self.assertAccepted(_body(imageRef='', block_device_mapping_v2=[
            self._bdm(boot_index='-1', volume_size='10')]))
        self.assertAccepted(_body(block_device_mapping=[
            {'volume_id': VOLUME, 'device_name': 'vda',
             'delete_on_termination': '1'}]))

    def test_values_nova_refuses(self):
        for fields in ({'boot_index': 'first'}, {'source_type': 'cdrom'},
                       {'destination_type': 'remote'}, {'uuid': ''},
                       {'device_name': 'vd a'}, {'volume_size': 0},
                       {'volume_size': '0'}, {'volume_size': 2 ** 31},
                       {'volume_size': '2147483648'}, {'size': 1}):
            self.assertRefused(_body(block_device_mapping_v2=[
                self._bdm(**fields)]))

    def test_the_largest_volume_size(self):
        for size in (2 ** 31 - 1, '2147483647', '002147483647'):
            self.assertAccepted(_body(block_device_mapping_v2=[
                self._bdm(volume_size=size)]))

    def test_a_device_tag_at_2_32_only_then_from_2_42(self):
        devices = [self._bdm(tag='root')]
        for version in ('2.32', '2.42'):
            self.assertAccepted(
                _body(version, block_device_mapping_v2=devices), version)
        for version in ('2.31', '2.33', '2.41'):
            self.assertRefused(
                _body(version, block_device_mapping_v2=devices), version)

    def test_a_volume_type_from_2_67(self):
        self.assertWindow('2.67', block_device_mapping_v2=[
            self._bdm(volume_type='ssd')])


class TestLaterFields(_SchemaTestCase):

    def test_description_from_2_19(self):
        self.assertWindow('2.19', description='a web server')
        self.assertRefused(_body('2.19', description='x' * 256), '2.19')

    def test_personality_until_2_56(self):
        files = [{'path': '/etc/motd', 'contents': 'aGk='}]
        self.assertAccepted(_body('2.56', personality=files), '2.56')
        self.assertIn("'personality' was unexpected", self.assertRefused(
            _body('2.57', personality=files), '2.57'))
        self.assertRefused(_body(personality=[{'path': '/etc/motd',
                                               'contents': 'aGk'}]))

    def test_tags_from_2_52(self):
        self.assertWindow('2.52', tags=['web', 'prod'])
        for tags in (['a/b'], ['a,b'], [''], ['x' * 61],
                     ['t%d' % n for n in range(51)]):
            self.assertRefused(_body('2.52', tags=tags), '2.52')
        self.assertAccepted(_body('2.52', tags=['x' * 60] * 50), '2.52')

    def test_trusted_certificates_from_2_63(self):
        self.assertWindow('2.63', trusted_image_certificates=['c1', 'c2'])
        for certificates in ([], ['c1', 'c1'], [''],
                             ['c%d' % n for n in range(51)]):
            self.assertRefused(
                _body('2.63', trusted_image_certificates=certificates),
                '2.63')

    def test_host_and_node_from_2_74(self):
        self.assertWindow('2.74', host='compute-1')
        self.assertWindow('2.74', hypervisor_hostname='compute-1.local')
        self.assertRefused(_body('2.74', host='compute 1'), '2.74')

    def test_hostname_from_2_90_a_label_until_2_94(self):
        self.assertWindow('2.90', hostname='web-1')
        for name in ('a', 'web-', '-web', 'web_1', 'x' * 64,
                     'web-1.example.org'):
            self.assertRefused(_body('2.90', hostname=name), '2.93')
        self.assertAccepted(_body('2.94', hostname='web-1.example.org'),
                            '2.94')
        self.assertRefused(_body('2.94', hostname='web 1'), '2.94')


class TestSchedulerHints(_SchemaTestCase):

    def _hints(self, hints, key='os:scheduler_hints'):
        return dict(_body(), **{key: hints})

    def test_either_name_with_unknown_hints(self):
        for key in ('os:scheduler_hints', 'OS-SCH-HNT:scheduler_hints'):
            self.assertAccepted(self._hints(
                {'group': IMAGE, 'query': '["=", "$vcpus", 2]',
                 'cidr': '/24', 'build_near_host_ip': '192.0.2.1',
                 'anything': ['goes']}, key))

    def test_known_hints_are_checked(self):
        for hints in ({'group': 'web'}, {'different_host': ['web']},
                      {'same_host': [IMAGE, 'web']}, {'cidr': '24'},
                      {'build_near_host_ip': 'near'}, {'query': 1}, []):
            self.assertRefused(self._hints(hints))

    def test_a_group_may_be_a_list(self):
        self.assertAccepted(self._hints({'group': [IMAGE, VOLUME]}))
