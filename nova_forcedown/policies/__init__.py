"""Policy rules in code, one module per resource."""

import itertools

from nova_forcedown.policies import aggregates
from nova_forcedown.policies import availability_zone
from nova_forcedown.policies import base
from nova_forcedown.policies import extensions
from nova_forcedown.policies import flavor_access
from nova_forcedown.policies import flavor_extra_specs
from nova_forcedown.policies import flavor_manage
from nova_forcedown.policies import host_servers
from nova_forcedown.policies import hypervisors
from nova_forcedown.policies import instance_actions
from nova_forcedown.policies import migrations
from nova_forcedown.policies import server_actions
from nova_forcedown.policies import server_metadata
from nova_forcedown.policies import server_migrations
from nova_forcedown.policies import servers
from nova_forcedown.policies import services


def list_rules():
    return list(itertools.chain(
        base.list_rules(),
        aggregates.list_rules(),
        availability_zone.list_rules(),
        extensions.list_rules(),
        flavor_access.list_rules(),
        flavor_extra_specs.list_rules(),
        flavor_manage.list_rules(),
        host_servers.list_rules(),
        hypervisors.list_rules(),
        instance_actions.list_rules(),
        migrations.list_rules(),
        server_actions.list_rules(),
        server_metadata.list_rules(),
        server_migrations.list_rules(),
        servers.list_rules(),
        services.list_rules(),
    ))
