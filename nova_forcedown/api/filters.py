"""Middleware that reads a request and answers it or hands it on.

Most of the pipeline's middleware (authentication, the context, the UTF-8
and size checks) never changes a response. Written as ``webob.dec.wsgify``
methods, each made a Response of its own at every request and merged it
into the answer; a :class:`RequestFilter` makes none, and hands the
request on to the next application with the same environ.
"""

import webob
import webob.exc


class RequestFilter:
    """Subclasses say, in :meth:`process_request`, what to answer or None."""

    def __init__(self, application):
        self.application = application

    def __call__(self, environ, start_response):
        try:
            answer = self.process_request(webob.Request(environ))
        except webob.exc.HTTPException as exc:
            answer = exc
        if answer is None:
            return self.application(environ, start_response)
        return answer(environ, start_response)

    def process_request(self, req):
        """The response to answer ``req`` with, or None to hand it on."""
        raise NotImplementedError()
