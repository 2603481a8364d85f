"""Log lines as oslo.log writes them, captured while a test runs.

Every line, DEBUG and up, from every logger, formatted by oslo.log's
ContextFormatter with the app's own ConfigOpts, in a format that shows what
an operator's log shows of a line's request: its global and own request
ids, user and project.
"""

import functools
import logging

import fixtures
from oslo_log import formatters

CONTEXT_FORMAT = ('[%(global_request_id)s %(request_id)s user=%(user)s '
                  'project=%(project)s] %(message)s')
NO_CONTEXT_FORMAT = '[no context] %(message)s'


class LogLines(fixtures.Fixture):

    def __init__(self, conf):
        super().__init__()
        self.conf = conf

    def _setUp(self):
        self.conf.set_override('logging_context_format_string',
                               CONTEXT_FORMAT)
        self.conf.set_override('logging_default_format_string',
                               NO_CONTEXT_FORMAT)
        self.conf.set_override('logging_debug_format_suffix', '')
        self.logger = self.useFixture(fixtures.FakeLogger(
            level=logging.DEBUG, format='%(message)s',
            formatter=functools.partial(formatters.ContextFormatter,
                                        config=self.conf)))

    @property
    def output(self):
        return self.logger.output

    def lines(self):
        return self.logger.output.splitlines()

    def reset(self):
        self.logger.reset_output()
