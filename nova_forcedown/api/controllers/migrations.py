"""GET /os-migrations: the moves of servers (evacuations here).

As Nova lists them at each microversion: filters, then from 2.59 paging
newest first and strict parameters, from 2.80 by user and project.
"""

from nova_forcedown.api import microversion
from nova_forcedown.api import request as api_request
from nova_forcedown.api.schemas import migrations as schemas
from nova_forcedown.api import validation
from nova_forcedown.api.views import migrations as views
from nova_forcedown.objects import migration as migration_obj
from nova_forcedown.policies import migrations as policies


def list_migrations(req):
    version = req.version
    params = validation.query(req, _index_schema(version))
    last = validation.last_values(params)
    context = req.context
    context.can(policies.INDEX, {'project_id': context.project_id})
    if not (version.matches(microversion.V2_80) and
            last.get('project_id') == context.project_id):
        context.can(policies.INDEX_ALL_PROJECTS)
    show_hosts = context.can(policies.INDEX_HOST, fatal=False)
    paged = version.matches(microversion.V2_59)
    since, before = (validation.changes_window(last) if paged
                     else (None, None))
    limit = req.page_size(last.get('limit')) if paged else None
    records = migration_obj.get_all(
        context, exact=_exact(last), host=last.get('host'),
        hidden=(validation.to_bool(last['hidden'])
                if last.get('hidden') in validation.BOOLEAN_VALUES
                else None),
        changes_since=since, changes_before=before, limit=limit,
        marker=last.get('marker') if paged else None)
    shown = [record for record in records if not record.hidden]
    links = (req.next_links(records, limit, lambda record: record.uuid, last)
             if paged else None)
    return api_request.listing_response(
        'migrations', shown,
        lambda record: views.migration(record, version, show_hosts),
        {'migrations_links': links} if links else None)


ROUTES = {
    '/os-migrations': {'GET': list_migrations},
}


def _index_schema(version):
    if version.matches(microversion.V2_80):
        return schemas.INDEX_QUERY_V280
    if version.matches(microversion.V2_66):
        return schemas.INDEX_QUERY_V266
    if version.matches(microversion.V2_59):
        return schemas.INDEX_QUERY_V259
    return schemas.INDEX_QUERY


def _exact(last):
    """The exact filters; ``host`` replaces ``source_compute``, as in Nova."""
    exact = {name: last[name] for name in migration_obj.EXACT_FILTERS
             if name in last}
    if 'host' in last:
        exact.pop('source_compute', None)
    return exact
