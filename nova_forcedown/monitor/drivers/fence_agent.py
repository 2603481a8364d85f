"""Any ClusterLabs fence agent (fence_ipmilan, fence_redfish, ...).

The agent gets its arguments on standard input, one ``name=value`` per
line, as Pacemaker's fencer gives them. Exit codes: 0 success (for
``status``: powered on), 2 for ``status``: powered off, others failure.

An agent that has not ended within the driver's timeout is killed with
every process it started (fence_ipmilan runs ipmitool, for one): it runs
in a process group of its own, killed whole. A process that leaves that
group (a new session of its own) is out of reach.
"""

import os
import signal
import subprocess

from nova_forcedown.monitor.drivers import base

_STATUS_OFF = 2


class FenceAgentDriver(base.FenceDriver):

    def power_state(self):
        code = self._run('status', ok=(0, _STATUS_OFF))
        return base.OFF if code == _STATUS_OFF else base.ON

    def power_off(self):
        self._run('off')

    def power_on(self):
        self._run('on')

    def arguments(self, action):
        """The standard input of the agent for ``action``."""
        settings = self.settings
        values = {'action': action, 'ip': settings.bmc_address,
                  'ipport': settings.bmc_port,
                  'username': settings.bmc_username,
                  'password': settings.bmc_password}
        values.update(settings.fence_agent_options or {})
        return ''.join('%s=%s\n' % (name, value)
                       for name, value in values.items()
                       if value is not None)

    def _run(self, action, ok=(0,)):
        agent = self.settings.fence_agent
        if not agent:
            raise base.FenceError('no fence_agent command')
        try:
            process = subprocess.Popen(
                [agent], stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                stderr=subprocess.PIPE, text=True, start_new_session=True)
        except OSError as exc:
            raise base.FenceError('%s %s: %s' % (agent, action, exc))
        with process:
            try:
                stdout, stderr = process.communicate(
                    self.arguments(action), timeout=self.timeout)
            except subprocess.TimeoutExpired:
                _kill_group(process)
                raise base.FenceError('%s %s: no answer within %g s' % (
                    agent, action, self.timeout))
        if process.returncode not in ok:
            said = (stderr or stdout).strip().splitlines()
            raise base.FenceError('%s %s: exit %d%s' % (
                agent, action, process.returncode,
                ': ' + said[-1] if said else ''))
        return process.returncode


def _kill_group(process):
    """Kill ``process`` and what it started, in its group; reap it."""
    try:
        # Its group's id is its pid (start_new_session), even once it has
        # ended while its children run on.
        os.killpg(process.pid, signal.SIGKILL)
    except ProcessLookupError:
        pass
    process.wait()
