"""Any ClusterLabs fence agent (fence_ipmilan, fence_redfish, ...).

The agent gets its arguments on standard input, one ``name=value`` per
line, as Pacemaker's fencer gives them. Exit codes: 0 success (for
``status``: powered on), 2 for ``status``: powered off, others failure.
"""

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
            result = subprocess.run(
                [agent], input=self.arguments(action), capture_output=True,
                text=True, timeout=self.timeout)
        except (OSError, subprocess.TimeoutExpired) as exc:
            raise base.FenceError('%s %s: %s' % (agent, action, exc))
        if result.returncode not in ok:
            said = (result.stderr or result.stdout).strip().splitlines()
            raise base.FenceError('%s %s: exit %d%s' % (
                agent, action, result.returncode,
                ': ' + said[-1] if said else ''))
        return result.returncode
