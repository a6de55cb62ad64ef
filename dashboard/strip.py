"""The status strip in htmx answers: a swap that changed the memory or failed updates it out of band."""

from __future__ import annotations

from urllib.parse import urlsplit

from django.http import HttpRequest, HttpResponse, QueryDict
from django.template.loader import render_to_string
from django.urls import reverse


def with_strip(request: HttpRequest, response: HttpResponse) -> HttpResponse:
    """Append the strip and the navigation's counts of contradictions and unreviewed facts
    (hx-swap-oob) to an htmx partial; full pages carry them already."""
    if request.htmx and not getattr(response, "streaming", False):
        response.content += render_to_string("status_strip.html", {"oob": True}, request).encode()
        response.content += render_to_string("conflict_count.html", {"oob": True}, request).encode()
        response.content += render_to_string("inbox_count.html", {"oob": True}, request).encode()
    return response


def with_count(request: HttpRequest, response: HttpResponse) -> HttpResponse:
    """After an add, delete or undo on the facts page, its count of facts (under the page's own
    filters, read from HX-Current-URL) updates too."""
    from .forms import FactFilter
    from .memory import memory

    url = urlsplit(request.htmx.current_url or "") if request.htmx else None
    if url is None or url.path != reverse("facts"):
        return response
    filters = FactFilter(QueryDict(url.query))
    filters.is_valid()
    page = memory(request.memory).list_facts(**filters.listing(), **filters.lifecycle(), limit=1)
    response.content += render_to_string("facts/list.html#fact-count", {"page": page, "filters": filters, "oob": True},
                                         request).encode()
    return response
