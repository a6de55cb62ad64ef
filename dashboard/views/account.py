"""Sign-in with a brake on password guessing: at most MAX_FAILURES per account and per address
in WINDOW seconds, in the database (all processes share it).

Each attempt claims its slot with one conditional UPDATE *before* the password is checked, so
parallel guesses cannot all slip past a count that is only written after each check (the
check-then-record race that a hand-written cache brake, and django-axes, both have).
"""

from __future__ import annotations

from datetime import timedelta

from django.contrib.auth import views as auth_views
from django.db import IntegrityError
from django.db.models import F
from django.http import HttpResponse
from django.shortcuts import render
from django.utils import timezone

from ..models import SignInFailures

MAX_FAILURES = 5
WINDOW = 300  # seconds


def _claim(key: str) -> bool:
    """Count one more attempt against key, unless it already has MAX_FAILURES in the window."""
    now = timezone.now()
    try:
        SignInFailures.objects.get_or_create(key=key, defaults={"started": now})
    except IntegrityError:
        pass  # a parallel attempt created it first
    rows = SignInFailures.objects.filter(key=key)
    rows.filter(started__lt=now - timedelta(seconds=WINDOW)).update(failures=0, started=now)  # the window passed
    return rows.filter(failures__lt=MAX_FAILURES).update(failures=F("failures") + 1) == 1


def _release(key: str) -> None:
    SignInFailures.objects.filter(key=key, failures__gt=0).update(failures=F("failures") - 1)


class LoginView(auth_views.LoginView):
    template_name = "registration/login.html"
    redirect_authenticated_user = True

    def _keys(self) -> list[str]:
        username = (self.request.POST.get("username") or "").strip().lower()[:150]
        return [f"user:{username}", f"addr:{self.request.META.get('REMOTE_ADDR', '?')}"]

    def post(self, request, *args, **kwargs) -> HttpResponse:
        claimed = []
        for key in self._keys():
            if not _claim(key):
                for k in claimed:
                    _release(k)
                return render(request, "registration/login.html", {"locked": True, "form": self.get_form()}, status=429)
            claimed.append(key)
        return super().post(request, *args, **kwargs)  # a failure keeps its claim; a success clears both

    def form_valid(self, form):
        SignInFailures.objects.filter(key__in=self._keys()).delete()
        return super().form_valid(form)
