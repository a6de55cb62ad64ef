"""Turn the memory client's errors into pages that say what happened and what to do."""

from __future__ import annotations

import logging

from django.shortcuts import render

from memories.client import InvalidResponse, MemoryServiceError, StatusError, TimedOut, Unauthorized, Unreachable

from .memory import forget_status, memory

log = logging.getLogger(__name__)


class MemoryErrorMiddleware:
    def __init__(self, get_response):
        self.get_response = get_response

    def __call__(self, request):
        return self.get_response(request)

    def process_exception(self, request, exception):
        if not isinstance(exception, MemoryServiceError):
            return None
        forget_status()

        if isinstance(exception, TimedOut):
            problem, status = "timed_out", 504
        elif isinstance(exception, Unreachable):
            problem, status = "unreachable", 503
        elif isinstance(exception, Unauthorized):
            problem, status = "unauthorized", 502
        elif isinstance(exception, InvalidResponse):
            problem, status = "invalid", 502
        elif isinstance(exception, StatusError):
            problem, status = "error_status", 502
        else:
            problem, status = "unknown", 502
        # The message names the URL and the error, never the secret (the client never puts it there).
        log.warning("memory service problem on %s %s: %s", request.method, request.path, exception)
        context = {"problem": problem, "url": memory().base_url, "detail": str(exception)}
        if request.htmx:
            response = render(request, "service_down.html#problem", context, status=status)
            response["HX-Retarget"] = "#alerts"
            response["HX-Reswap"] = "innerHTML"
            return response
        return render(request, "service_down.html", context, status=status)
