"""The dashboard's own error pages, in its own words."""

from __future__ import annotations

from django.http import HttpRequest, HttpResponse
from django.shortcuts import render

NOWHERE = "There is nothing at this address: the link may be mistyped, or the page may have moved."


def not_found(request: HttpRequest, exception: Exception) -> HttpResponse:
    """404: a view's own message (Http404 with a sentence), else a plain one; never the name of
    Django's resolver exception, which is what an address matching no route carried."""
    message = exception.args[0] if exception.args and isinstance(exception.args[0], str) else NOWHERE
    return render(request, "404.html", {"exception": message}, status=404)
