"""Request context: who is asking, and the database session they use."""

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
