"""Who may change what: each account is an owner (changes anything) or a viewer (reads every page,
debugs recalls, downloads the export; never writes, deletes, imports, forgets, resolves, approves,
undoes, runs an evaluation or a calibration, changes a setting or creates a memory).

Checked in one place, before any view runs (RoleMiddleware), by the request's method and URL
name: a viewer's request that is not a read is refused, unless its URL name is in VIEWER_MAY_SEND;
the pages in OWNERS_ONLY are refused to a viewer even to read. So a view added later is an
owner's until it is named here: a forgotten name keeps a viewer out, never lets one write. The
templates hide what a viewer may not do (`may_change`), but this is the check."""

from __future__ import annotations

from django.contrib.auth import get_user_model
from django.db.models import Q
from django.http import HttpRequest, HttpResponse
from django.shortcuts import render

from .models import Account

READS = {"GET", "HEAD", "OPTIONS"}  # every GET view only reads (tests/test_dashboard_viewer.py holds them to it)
VIEWER_MAY_SEND = {"login", "logout"}  # signing in and out changes nothing at the desk
OWNERS_ONLY = {"accounts", "account_role", "account_password", "account_remove"}  # who may do what: the owners' business


def role_of(user) -> str:
    if not user.is_authenticated:
        return Account.VIEWER
    try:
        return user.desk.role
    except Account.DoesNotExist:
        return Account.OWNER if user.is_superuser else Account.VIEWER


def may_change(user) -> bool:
    return user.is_authenticated and user.is_active and role_of(user) == Account.OWNER


def owners():
    """The active accounts that are owners."""
    is_owner = Q(desk__role=Account.OWNER) | Q(desk__isnull=True, is_superuser=True)
    return get_user_model().objects.filter(is_owner, is_active=True)


def refused(request: HttpRequest) -> HttpResponse:
    """403, saying why and who can help."""
    context = {"who": request.user.get_username(), "owners": [u.get_username() for u in owners()[:5]],
               "page": request.method in READS}
    if request.htmx:
        from .middleware import htmx_problem

        return htmx_problem(request, "forbidden.html#problem", context, 403)
    return render(request, "forbidden.html", context, status=403)


class RoleMiddleware:
    """Refuses a viewer what only an owner may do. After the sign-in check (an anonymous request
    was sent to sign in already) and the memory's name (the URL is resolved without /m/NAME/)."""

    def __init__(self, get_response):
        self.get_response = get_response

    def __call__(self, request):
        return self.get_response(request)

    def process_view(self, request, view_func, view_args, view_kwargs):
        if not request.user.is_authenticated or may_change(request.user):
            return None
        name = request.resolver_match.url_name if request.resolver_match else None
        if name in OWNERS_ONLY or (request.method not in READS and name not in VIEWER_MAY_SEND):
            return refused(request)
        return None
