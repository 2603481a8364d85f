"""User data, tags and the name filter of servers, on every backend.

What a client sees through the real WSGI app on SQLite, PostgreSQL and
MariaDB: the user data and tags given at ``POST /servers`` come back in
the server views (``OS-EXT-SRV-ATTR:user_data`` from 2.3, ``tags`` from
2.26); the four tag filters select as Nova's do; ``name`` is a regular
expression; deleting or purging a server takes its tags with it.
"""

import base64

from oslo_utils import timeutils
import sqlalchemy as sa
import webob

from nova_forcedown.api import deploy
from nova_forcedown import context as nf_context
from nova_forcedown.db import models
from nova_forcedown.db import purge
from tests.fixtures import api_world
from tests.fixtures import configuration
from tests.fixtures import databases
from tests.fixtures import db_rows

ADMIN_HEADERS = {'X-Auth-Token': 'admin:' + api_world.ADMIN_PROJECT}
IMAGE = '70a599e0-31e7-49b7-b260-868f441e862b'
USER_DATA = base64.b64encode(b'#!/bin/sh\necho hello\n').decode()


class ServerUserDataAndTagsMixin:

    def setUp(self):
        super().setUp()
        conf = self.useFixture(configuration.ConfFixture(
            api__auth_strategy='noauth2')).conf
        self.app = deploy.load_app(conf)
        ctxt = nf_context.get_admin_context()
        service = db_rows.create_service(
            ctxt, host='host1', last_seen_up=timeutils.utcnow())
        db_rows.create_compute_node(ctxt, service, 'host1', vcpus=64,
                                    memory_mb=65536, local_gb=1000,
                                    vcpus_used=0, memory_mb_used=0,
                                    local_gb_used=0)
        self.assertEqual(200, self.send('POST', '/v2.1/flavors', '2.1', {
            'flavor': {'name': 'small', 'id': 'small', 'ram': 512,
                       'vcpus': 1, 'disk': 1}}).status_code)

    def send(self, method, path, version=None, body=None):
        req = webob.Request.blank(path, method=method, headers=ADMIN_HEADERS)
        if version:
            req.headers['OpenStack-API-Version'] = 'compute ' + version
        if body is not None:
            req.json_body = body
        return req.get_response(self.app)

    def create(self, name, version='2.52', **fields):
        server = dict(fields, name=name, flavorRef='small', imageRef=IMAGE,
                      networks='none')
        resp = self.send('POST', '/v2.1/servers', version,
                         {'server': server})
        self.assertEqual(202, resp.status_code, resp.body)
        return resp.json['server']['id']

    def show(self, uuid, version):
        resp = self.send('GET', '/v2.1/servers/' + uuid, version)
        self.assertEqual(200, resp.status_code, resp.body)
        return resp.json['server']

    def names(self, query, version='2.26'):
        resp = self.send('GET', '/v2.1/servers/detail?' + query, version)
        self.assertEqual(200, resp.status_code, resp.body)
        return sorted(server['name'] for server in resp.json['servers'])

    def test_user_data_and_tags_given_at_create_are_shown(self):
        uuid = self.create('tagged', user_data=USER_DATA,
                           tags=['web', 'prod', 'web'])

        shown = self.show(uuid, '2.52')
        self.assertEqual(USER_DATA, shown['OS-EXT-SRV-ATTR:user_data'])
        # Each tag once, as Nova keeps them.
        self.assertEqual(['prod', 'web'], shown['tags'])
        listed, = self.send('GET', '/v2.1/servers/detail?name=tagged',
                            '2.100').json['servers']
        self.assertEqual(['prod', 'web'], listed['tags'])
        self.assertEqual(USER_DATA, listed['OS-EXT-SRV-ATTR:user_data'])
        # The microversions that show them.
        self.assertEqual(USER_DATA,
                         self.show(uuid, '2.3')['OS-EXT-SRV-ATTR:user_data'])
        self.assertNotIn('OS-EXT-SRV-ATTR:user_data', self.show(uuid, '2.1'))
        self.assertNotIn('tags', self.show(uuid, '2.25'))
        self.assertEqual(['prod', 'web'], self.show(uuid, '2.26')['tags'])
        # A server created without them has none.
        plain = self.show(self.create('plain'), '2.100')
        self.assertIsNone(plain['OS-EXT-SRV-ATTR:user_data'])
        self.assertEqual([], plain['tags'])

    def test_tag_filters_select_as_nova_s(self):
        self.create('ab', tags=['a', 'b'])
        self.create('a', tags=['a'])
        self.create('bc', tags=['b', 'c'])
        self.create('none')
        for query, expected in (
                ('tags=a,b', ['ab']),
                ('tags=a', ['a', 'ab']),
                ('tags=a,c', []),
                ('tags-any=a,c', ['a', 'ab', 'bc']),
                ('not-tags=a,b', ['a', 'bc', 'none']),
                ('not-tags-any=a,c', ['none']),
                ('tags=a&not-tags-any=b', ['a']),
                ('tags-any=b&not-tags=b,c', ['ab']),
                # The last of repeated values, as Nova reads them.
                ('tags=c&tags=a,b', ['ab'])):
            self.assertEqual(expected, self.names(query), query)
        # Before 2.26 the tag filters are not filters.
        self.assertEqual(['a', 'ab', 'bc', 'none'],
                         self.names('tags=a,b', version='2.25'))

    def test_name_is_a_regular_expression(self):
        for name in ('web-1', 'web-22', 'db-1', 'webserver'):
            self.create(name)
        for query, expected in (
                ('name=^web-[0-9]%2B$', ['web-1', 'web-22']),
                ('name=-1$', ['db-1', 'web-1']),
                ('name=b-', ['db-1', 'web-1', 'web-22']),
                ('name=^(db|webs)', ['db-1', 'webserver'])
                if self.engine.dialect.name != 'mysql' else
                # Nova escapes | on MySQL and MariaDB: a literal there.
                ('name=^(db|webs)', []),
                ('name=.', ['db-1', 'web-1', 'web-22', 'webserver'])):
            self.assertEqual(expected, self.names(query), query)

    def test_a_regular_expression_python_refuses_is_a_400(self):
        self.create('web-1')
        for query, value in (('name=(', '('), ('name=', ''),
                             ('display_name=a[', 'a[')):
            resp = self.send('GET', '/v2.1/servers?' + query, '2.1')
            self.assertEqual(400, resp.status_code, query)
            name = query.split('=')[0]
            self.assertEqual(
                "Invalid input for query parameters %s. Value: %s. "
                "'%s' is not a 'regex'" % (name, value, value),
                resp.json['badRequest']['message'])

    def test_a_regular_expression_the_database_refuses_is_a_400(self):
        self.create('x')
        # Python's ASCII flag: neither PostgreSQL nor MariaDB know it.
        resp = self.send('GET', '/v2.1/servers?name=(%3Fa)x', '2.1')
        if self.engine.dialect.name == 'sqlite':
            self.assertEqual(200, resp.status_code, resp.body)
            self.assertEqual(['x'], [server['name'] for server in
                                     resp.json['servers']])
            return
        self.assertEqual(400, resp.status_code, resp.body)
        self.assertEqual('The database does not accept the regular '
                         'expression of the filter: (?a)x',
                         resp.json['badRequest']['message'])

    def _tags(self):
        table = models.Tag.__table__
        with self.engine.connect() as connection:
            return sorted(connection.execute(
                sa.select(table.c.resource_id, table.c.tag)).all())

    def test_a_deleted_server_loses_its_tags_and_a_purge_its_row(self):
        kept = self.create('kept', tags=['a'])
        gone = self.create('gone', tags=['a', 'b'])
        # Its host is down: the server is deleted at once.
        with self.engine.begin() as connection:
            connection.execute(sa.update(models.Service).values(
                forced_down=True))
        self.assertEqual(204, self.send('DELETE', '/v2.1/servers/' + gone,
                                        '2.26').status_code)
        self.assertEqual([(kept, 'a')], self._tags())
        self.assertEqual(['kept'], self.names('tags=a'))
        shown = self.send('GET', '/v2.1/servers/detail?deleted=true',
                          '2.26').json['servers']
        self.assertEqual([('gone', [])],
                         [(server['name'], server['tags'])
                          for server in shown])
        # A tag left behind (written behind the API's back) is purged
        # with its server.
        with self.engine.begin() as connection:
            connection.execute(sa.insert(models.Tag).values(
                resource_id=gone, tag='left'))
        purged = purge.purge(self.context, None)
        self.assertEqual((1, 1), (purged['instances'], purged['tags']))
        self.assertEqual([(kept, 'a')], self._tags())


databases.backend_test_cases(ServerUserDataAndTagsMixin, globals())
