"""Pages for the owner's own mistakes (a typo in a URL, a bad setting): 400 or 404 with what was wrong.

The memory service's failures are the middleware's; these never say "the memory service reported an error".
"""

from __future__ import annotations

from django.http import HttpRequest, HttpResponse
from django.shortcuts import render


def owner_mistake(request: HttpRequest, title: str, message: str, *, status: int = 400, back: str = "",
                  back_label: str = "") -> HttpResponse:
    context = {"title": title, "message": message, "back": back, "back_label": back_label}
    if request.htmx:
        from .middleware import htmx_problem

        return htmx_problem(request, "bad_request.html#problem", context, status)
    return render(request, "bad_request.html", context, status=status)
