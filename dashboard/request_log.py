"""One line a request on stdout when the desk is served for real (`make serve`: REQUEST_LOG).

    2026-12-20 10:04:31 GET /desk/facts/12/ 200 14.2ms

The path, never the query string: the facts search, the recall debugger and the Inbox's filters
send the owner's words there, and a login redirect's `next` repeats them. The desk's own paths hold
fact, job and case ids and memory names, no fact's text; a form's text travels in the body, which is
never logged. Django's development server (`make run`) prints its own lines, so this stays off there.
"""

from __future__ import annotations

import logging
import time
from urllib.parse import quote

log = logging.getLogger("dashboard.requests")


class RequestLogMiddleware:
    """The outermost middleware, so a static file (WhiteNoise) and a refusal are timed and logged too."""

    def __init__(self, get_response):
        self.get_response = get_response

    def __call__(self, request):
        start = time.perf_counter()
        response = self.get_response(request)
        # A streamed export is timed to its first byte: the rest goes out after this line.
        log.info("%s %s %d %.1fms", request.method, logged_path(request.path), response.status_code,
                 (time.perf_counter() - start) * 1000)
        return response


def logged_path(path: str) -> str:
    """The path as it came, percent-encoded again: a %0A in it must not start a forged line."""
    return quote(path, safe="/:@!$&'()*+,;=-._~")
