"""[DEFAULT] options: liveness, zones and paths."""

import os

from oslo_config import cfg
from oslo_log import log as logging

LOG = logging.getLogger(__name__)

DEFAULT_OPTS = [
    cfg.StrOpt('state_path',
               default=os.path.join(os.path.expanduser('~'), '.local',
                                    'share', 'nova_forcedown'),
               sample_default='$HOME/.local/share/nova_forcedown',
               help='Directory where the service keeps its state, such as '
                    'the default SQLite database.'),
    cfg.IntOpt('report_interval', default=10, min=1,
               help='Seconds between two heartbeats of a service.'),
    cfg.IntOpt('service_down_time', default=60, min=1,
               help='Seconds without a heartbeat after which a service is '
                    'reported down. It must be larger than report_interval; '
                    'otherwise it is raised to 2.5 times report_interval.'),
    cfg.IntOpt('log_reminder_interval', default=300, min=1,
               help='Seconds between two reminders, in the compute agent\'s '
                    'log, of a condition that lasts: services forced down, '
                    'service or compute node records gone, the database '
                    'unavailable. The agent logs such a condition once when '
                    'it starts and once when it ends; in between it repeats '
                    'it this often, in one line for all the hosts '
                    'concerned, instead of once per host on every '
                    'heartbeat.'),
    cfg.BoolOpt('force_down_marks_instances_shutdown', default=False,
                help='Whether forcing a nova-compute service down (the API\'s '
                     'force-down, PUT /os-services/{id} with forced_down '
                     'true, nova-forcedown-manage service force-down) also '
                     'marks every server of its host powered off '
                     '(power_state shutdown), in the same transaction, as '
                     'POST /os-host-servers/{host}/action mark_shutdown '
                     'does. Turn it on only when whatever forces services '
                     'down has fenced the host first.'),
    cfg.StrOpt('servicegroup_driver', default='db',
               help='Servicegroup driver deciding liveness, by name in the '
                    'nova_forcedown.servicegroup.drivers namespace.'),
    cfg.StrOpt('default_availability_zone', default='nova',
               help='Zone of a compute service whose agent reports none.'),
    cfg.StrOpt('internal_service_availability_zone', default='internal',
               help='Zone of every service that is not nova-compute.'),
    cfg.FloatOpt('task_poll_interval', default=0.5, min=0.05,
                 help='Seconds between two looks of the compute agent for '
                      'the tasks (stop, start) the API recorded for its '
                      'hosts: one query per agent, whatever its number of '
                      'hosts. A task waits at most this long before its '
                      'host starts it. Used when no [DEFAULT] transport_url '
                      'is set; with one, the API tells the agent of each '
                      'task over RPC instead.'),
    cfg.FloatOpt('task_reconcile_interval', default=30.0, min=0.1,
                 help='With a [DEFAULT] transport_url: seconds between two '
                      'looks of the compute agent for the tasks the API '
                      'recorded for its hosts (and one look when it '
                      'starts), besides the casts that tell it of each at '
                      'once. The look is made by the first database '
                      'heartbeat once this time has passed (in its '
                      'transaction), so a task whose cast was lost (a '
                      'broker restart, an agent restarting) waits at most '
                      'this long or the heartbeat interval, whichever is '
                      'longer: report_interval on the db servicegroup '
                      'driver, [coordination] database_report_interval on '
                      'tooz.'),
    cfg.IntOpt('sync_power_state_interval', default=600, min=-1,
               help='Seconds between two comparisons, by the compute agent, '
                    'of the power state the database holds for each server '
                    'of its hosts with what the host runs (one at start '
                    'too), as Nova\'s compute makes them: the database '
                    'takes the host\'s, an active server found shut down '
                    'is stopped, a stopped one found running is stopped '
                    'again, and one the host does not run is left in its '
                    'vm_state with power state NOSTATE. Servers with a '
                    'task under way are left alone. -1 (or 0) turns the '
                    'comparison off.'),
    cfg.StrOpt('host', default=os.uname().nodename,
               sample_default='<current hostname>',
               help='Name of this host, used by the compute agent.'),
]


def register_opts(conf):
    conf.register_opts(DEFAULT_OPTS)


def check_service_down_time(conf):
    """Raise service_down_time above report_interval, as Nova does."""
    if conf.service_down_time <= conf.report_interval:
        raised = int(conf.report_interval * 2.5)
        LOG.warning('service_down_time (%(down)s) must be larger than '
                    'report_interval (%(interval)s); using %(raised)s.',
                    {'down': conf.service_down_time,
                     'interval': conf.report_interval, 'raised': raised})
        conf.set_override('service_down_time', raised)


def list_opts():
    return {'DEFAULT': DEFAULT_OPTS}
