"""Purging history: the rows older than a date that no process needs.

What goes (``before`` None: whatever its age):

* ``instance_actions``, with their ``instance_actions_events``: actions
  last changed before the date, of deleted and live servers alike (the
  history is an audit log, kept by age), but never those of a live
  server that has a task (an agent is yet to record its events there) or
  of a server with an evacuation under way;
* ``migrations`` completed or in error, last changed before the date,
  unless their live server has a task (its agent reads the migration of
  a rebuild). The others always stay: the agents move accepted,
  pre-migrating and done ones on, and the force-up guard refuses while
  one is open; a host's agent reads a failed one at its next start, to
  remove the copy of the server it may still hold;
* ``service_history`` entries recorded before the date;
* ``instance_faults`` recorded before the date, but the newest of a live
  server (its view shows it while the server is in error);
* soft-deleted ``instances``, ``compute_nodes`` and ``services``, deleted
  before the date; the ``tags`` of the instances go with them (a delete
  already removes a server's tags, as Nova's does: any left are purged).

Each batch picks at most ``max_rows`` rows of one table (actions with
their events) and deletes them in one transaction; the next batch starts
after the last row picked, so a kept row is looked at once.
"""

import collections

import sqlalchemy as sa

from nova_forcedown.db import engine
from nova_forcedown.db import migrations as db_migrations
from nova_forcedown.db import models

_ACTIONS = models.InstanceAction.__table__
_EVENTS = models.InstanceActionEvent.__table__
_MIGRATIONS = models.Migration.__table__
_HISTORY = models.ServiceHistory.__table__
_FAULTS = models.InstanceFault.__table__
_INSTANCES = models.Instance.__table__
_TAGS = models.Tag.__table__
_NODES = models.ComputeNode.__table__
_SERVICES = models.Service.__table__

# The statuses of migrations no process reads any more, and of those under
# way (failed ones are neither: see the module's docstring).
PURGED_STATUSES = (db_migrations.COMPLETED, db_migrations.ERROR)
UNDER_WAY_STATUSES = (db_migrations.ACCEPTED, db_migrations.PRE_MIGRATING,
                      db_migrations.DONE)

# Rows a batch deletes at most, by default and at most: its ids are bound
# parameters of its statements (SQLite takes 32766 at most).
DEFAULT_MAX_ROWS = 1000
MAX_ROWS = 10000

# The tables a purge deletes from, in the order it reports them.
TABLES = (_MIGRATIONS.name, _ACTIONS.name, _EVENTS.name, _HISTORY.name,
          _FAULTS.name, _INSTANCES.name, _TAGS.name, _NODES.name,
          _SERVICES.name)

# A table's rows to purge: ``criteria(before)`` picks them; the rows of
# ``dependent`` that ``dependent_of(ids)`` picks (``ids``: a list or a
# SELECT of the ids of the rows purged) go with them.
Rule = collections.namedtuple('Rule', ('table', 'criteria', 'dependent',
                                       'dependent_of'))


def _events_of(action_ids):
    return _EVENTS.c.action_id.in_(action_ids)


def _tags_of(instance_ids):
    # An alias: a SELECT of ids from instances is never correlated to it.
    purged = _INSTANCES.alias('purged')
    return _TAGS.c.resource_id.in_(
        sa.select(purged.c.uuid).where(purged.c.id.in_(instance_ids)))


def _changed(table):
    """When a row last changed: a row never updated, when created."""
    return sa.func.coalesce(table.c.updated_at, table.c.created_at)


def _older(when, before):
    return [] if before is None else [when < before]


def _server_has_task(instance_uuid):
    """The live server has a task that its host's agent is to carry out."""
    return sa.exists().where(_INSTANCES.c.uuid == instance_uuid,
                             _INSTANCES.c.deleted == 0,
                             _INSTANCES.c.task_state.is_not(None))


def _evacuation_under_way(instance_uuid):
    """The server has a live migration under way.

    Named statuses, not "not ended": a few seeks of the index on
    (deleted, instance_uuid, status) per action, where a server retried
    thousands of times has as many error migrations to step over.
    """
    return sa.exists().where(
        _MIGRATIONS.c.deleted == 0,
        _MIGRATIONS.c.instance_uuid == instance_uuid,
        _MIGRATIONS.c.status.in_(UNDER_WAY_STATUSES))


def _actions(before):
    return [*_older(_changed(_ACTIONS), before),
            ~_server_has_task(_ACTIONS.c.instance_uuid),
            ~_evacuation_under_way(_ACTIONS.c.instance_uuid)]


def _migrations(before):
    return [_MIGRATIONS.c.status.in_(PURGED_STATUSES),
            *_older(_changed(_MIGRATIONS), before),
            ~_server_has_task(_MIGRATIONS.c.instance_uuid)]


def _history(before):
    return _older(_HISTORY.c.created_at, before)


def _faults(before):
    """Faults before the date, but what a live server's view shows."""
    newer = _FAULTS.alias('newer')
    live_server = sa.exists().where(
        _INSTANCES.c.uuid == _FAULTS.c.instance_uuid,
        _INSTANCES.c.deleted == 0)
    # Newer as the view orders them: by time, then by id.
    superseded = sa.exists().where(
        newer.c.instance_uuid == _FAULTS.c.instance_uuid,
        sa.or_(newer.c.created_at > _FAULTS.c.created_at,
               sa.and_(newer.c.created_at == _FAULTS.c.created_at,
                       newer.c.id > _FAULTS.c.id)))
    return [*_older(_FAULTS.c.created_at, before),
            sa.or_(~live_server, superseded)]


def _soft_deleted(table):
    def criteria(before):
        when = sa.func.coalesce(table.c.deleted_at, table.c.updated_at,
                                table.c.created_at)
        return [table.c.deleted != 0, *_older(when, before)]
    return criteria


RULES = (
    Rule(_ACTIONS, _actions, _EVENTS, _events_of),
    Rule(_MIGRATIONS, _migrations, None, None),
    Rule(_HISTORY, _history, None, None),
    Rule(_FAULTS, _faults, None, None),
    Rule(_INSTANCES, _soft_deleted(_INSTANCES), _TAGS, _tags_of),
    Rule(_NODES, _soft_deleted(_NODES), None, None),
    Rule(_SERVICES, _soft_deleted(_SERVICES), None, None),
)


@engine.reader
def count(context, before):
    """{table: rows a purge of what is older than ``before`` would delete}.

    Every table of :data:`TABLES`, in one transaction.
    """
    connection = context.connection
    counts = {}
    for rule in RULES:
        picked = sa.select(rule.table.c.id).where(*rule.criteria(before))
        counts[rule.table.name] = connection.execute(
            sa.select(sa.func.count()).select_from(picked.subquery())
        ).scalar()
        if rule.dependent is not None:
            counts[rule.dependent.name] = connection.execute(
                sa.select(sa.func.count()).select_from(rule.dependent)
                .where(rule.dependent_of(picked))).scalar()
    return {table: counts[table] for table in TABLES}


def purge(context, before, max_rows=DEFAULT_MAX_ROWS):
    """Delete what is older than ``before``, batch after batch.

    {table: rows deleted}, every table of :data:`TABLES`. Each batch is
    its own transaction: a purge stopped half-way leaves whole batches
    deleted and nothing else.
    """
    deleted = dict.fromkeys(TABLES, 0)
    for rule in RULES:
        after = 0
        while after is not None:
            batch, after = _purge_batch(context, rule, before, max_rows,
                                        after)
            for table, rows in batch.items():
                deleted[table] += rows
    return deleted


@engine.writer
def _purge_batch(context, rule, before, max_rows, after):
    """Delete up to ``max_rows`` rows of ``rule`` whose ids follow ``after``.

    ({table: rows deleted}, the last id picked, or None once the rule has
    no more rows).
    """
    table = rule.table
    connection = context.connection
    ids = connection.execute(
        sa.select(table.c.id)
        .where(table.c.id > after, *rule.criteria(before))
        .order_by(table.c.id).limit(max_rows)).scalars().all()
    if not ids:
        return {}, None
    deleted = {}
    if rule.dependent is not None:
        deleted[rule.dependent.name] = connection.execute(
            rule.dependent.delete().where(rule.dependent_of(ids))
        ).rowcount
    deleted[table.name] = connection.execute(
        table.delete().where(table.c.id.in_(ids))).rowcount
    return deleted, (ids[-1] if len(ids) == max_rows else None)
