"""Request context: who is asking, and the database session they use."""

import getpass
import os

from oslo_context import context
from oslo_db.sqlalchemy import enginefacade

from nova_forcedown import exception


@enginefacade.transaction_context_provider
class RequestContext(context.RequestContext):
    """oslo.context RequestContext that enginefacade can attach sessions to.

    ``policy`` is the oslo.policy enforcer wrapper to authorize against; the
    API sets it per request, command-line tools leave it unset.
    """

    def __init__(self, *args, enforcer=None, **kwargs):
        super().__init__(*args, **kwargs)
        self.enforcer = enforcer

    def can(self, action, target=None, fatal=True):
        """Authorize ``action`` for this context; raise or return a bool."""
        if self.enforcer is None:
            raise exception.PolicyNotAuthorized(action=action)
        return self.enforcer.authorize(self, action, target or {}, fatal)


def get_admin_context():
    """A context for command-line tools and the agent: admin, no user."""
    return RequestContext(user_id=None, project_id=None, is_admin=True,
                          roles=['admin'], overwrite=False)


def get_operator_context():
    """An admin context for a command an operator runs: as its OS user.

    What the command changes is recorded (service history, instance
    actions) under that user's login name.
    """
    return RequestContext(user_id=_login_name(), project_id=None,
                          is_admin=True, roles=['admin'], overwrite=False)


def _login_name():
    try:
        return getpass.getuser()
    except (KeyError, OSError):
        # No name for this uid (a container's): its number says who.
        return 'uid-%d' % os.getuid()


def make_current(ctx):
    """Make ``ctx`` this thread's current context; None leaves it none.

    oslo.log names the current context in every line. oslo.context sets it
    whenever a context is created, but has no call to clear it, so its
    thread-local store is set directly here, the one place that does.
    """
    if ctx is None:
        context._request_store.context = None
    else:
        ctx.update_store()
