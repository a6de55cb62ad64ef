"""Turn the memory client's errors into pages that say what happened and what to do."""

from __future__ import annotations

import logging
import re

from django.conf import settings
from django.contrib.auth.views import redirect_to_login
from django.shortcuts import render
from django.urls import get_script_prefix, set_script_prefix
from django.utils.cache import add_never_cache_headers

from memories.client import InvalidResponse, MemoryServiceError, StatusError, TimedOut, Unauthorized, Unreachable

from .memory import (clear_deadline, configured, first, known, mark_down, memory, model_waiting, speak_for,
                     start_deadline)
from .strip import with_strip

log = logging.getLogger(__name__)


class NoStoreMiddleware:
    """The owner's memory is private: no page or export may be kept by a browser or proxy cache.
    (Static files are answered by WhiteNoise before this runs and stay cacheable.)"""

    def __init__(self, get_response):
        self.get_response = get_response

    def __call__(self, request):
        response = self.get_response(request)
        add_never_cache_headers(response)  # Cache-Control: max-age=0, no-cache, no-store, must-revalidate, private
        return response


PREFIXED = re.compile(r"/m/([^/]+)(/.*)?")


class MemoryNameMiddleware:
    """Which memory a request is about, from its URL: /m/NAME/... is the memory NAME, any other
    path the first configured one. request.memory holds the name for the views.

    The prefix moves into the script prefix for the request, so the URL patterns stay the same
    and every reverse(), {% url %} and redirect of the request stays in the same memory: a fact
    id never travels to another memory's pages by a link."""

    def __init__(self, get_response):
        self.get_response = get_response

    def __call__(self, request):
        root = get_script_prefix()
        request.memory_root = root  # the dashboard's own root, for links into other memories
        prefixed = PREFIXED.fullmatch(request.path_info)
        if prefixed is None:
            request.memory = first()
            return self.get_response(request)
        name, rest = prefixed.groups()
        if name not in configured():
            if not request.user.is_authenticated:
                return redirect_to_login(request.get_full_path())  # no probing for names, no call to the service
            if name not in known() and not evaluation_memory(name):  # a typo must not open (and so create) a memory
                return render(request, "404.html", {"exception": f"There is no memory called “{name}” here."}, status=404)
        request.memory, request.path_info = name, rest or "/"
        set_script_prefix(f"{root}m/{name}/")
        try:
            return self.get_response(request)
        finally:
            set_script_prefix(root)


def evaluation_memory(name: str) -> bool:
    """An imported evaluation set's own memory (the Worker cannot list it): reachable from its cases' links."""
    from .evaluation import is_set_memory
    from .models import EvalCase

    return is_set_memory(name) and EvalCase.objects.filter(memory=name).exists()


class MemoryErrorMiddleware:
    def __init__(self, get_response):
        self.get_response = get_response

    def __call__(self, request):
        # One deadline for every call this request makes, the status strip's probe included; each
        # call names the person signed in, for the memory's history.
        start_deadline(settings.MEMORY_TIMEOUT)
        speak_for(request.user.get_username() if request.user.is_authenticated else None)
        try:
            return self.get_response(request)
        finally:
            clear_deadline()
            speak_for(None)

    def process_exception(self, request, exception):
        if not isinstance(exception, MemoryServiceError):
            return None
        mark_down(exception, getattr(request, "memory", None))  # the page below shows the strip: no second wait on /health

        context: dict = {}
        if isinstance(exception, TimedOut):
            problem, status = "timed_out", 504
            if request.method == "POST":  # a write given up on may still land: say whether the model is what it waits for
                context = {"write": True, "model_seconds": model_waiting(getattr(request, "memory", None))}
        elif isinstance(exception, Unreachable):
            problem, status = "unreachable", 503
        elif isinstance(exception, Unauthorized):
            problem, status = "unauthorized", 502
        elif isinstance(exception, InvalidResponse):
            problem, status = "invalid", 502
        elif isinstance(exception, StatusError) and exception.code == "no_memory":
            # A memory named in MEMORY_NAMES or a link that the service does not hold (yet): say so, offer to create it.
            problem, status = "no_memory", 404
            context = {"name": getattr(request, "memory", None) or ""}
        elif isinstance(exception, StatusError) and exception.status < 500:
            problem, status = "refused", exception.status  # what was sent, not the memory: the strip stays as it is
        elif isinstance(exception, StatusError):
            problem, status = "error_status", 502
        else:
            problem, status = "unknown", 502
        # The message names the URL and the error, never the secret (the client never puts it there).
        log.warning("memory service problem on %s %s: %s", request.method, request.path, exception)
        context.update(problem=problem, url=memory(getattr(request, "memory", None)).base_url, detail=str(exception))
        if request.htmx:
            return htmx_problem(request, "service_down.html#problem", context, status)
        return render(request, "service_down.html", context, status=status)


def htmx_problem(request, template: str, context: dict, status: int):
    """An htmx request's error goes beside what the owner acted on (a row gets a row under it,
    anything else a note just before it), and the status strip updates out of band."""
    target = request.htmx.target or ""
    row = target.startswith("fact-") and target[5:].isdigit()
    context = {**context, "row": row, "target": target}
    response = with_strip(request, render(request, "htmx_problem.html", {**context, "template": template}, status=status))
    if target and target.replace("-", "").replace("_", "").isalnum():
        response["HX-Retarget"] = f"#{target}"
        response["HX-Reswap"] = "afterend" if row else "beforebegin"
    else:
        response["HX-Retarget"] = "#alerts"
        response["HX-Reswap"] = "innerHTML"
    return response
