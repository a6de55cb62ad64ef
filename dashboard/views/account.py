"""Sign-in with a brake on password guessing, in the database (all processes share it).

Two counts of failed sign-ins in WINDOW seconds:

- per address (`addr:<ip>`): MAX_FAILURES, whichever accounts it tries. One guessing address is
  stopped here and never reaches the account's count.
- per account (`user:<name>`): ACCOUNT_MAX_FAILURES from all addresses together, a ceiling on
  guessing spread over many addresses. It does not apply to an address that signed in to the
  account before (`good:<name>|<ip>`, remembered for KNOWN_FOR): the owner at their usual
  address gets in while the account is being guessed at from elsewhere. A new address waits out
  the window while the account is over its ceiling.

Guessing cannot lock the owner out for good: the brake lasts WINDOW seconds, and
`manage.py unlock_signin` clears it at once.

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

MAX_FAILURES = 5  # per address
ACCOUNT_MAX_FAILURES = 20  # per account, from addresses that have not signed in to it before
WINDOW = 300  # seconds
KNOWN_FOR = timedelta(days=30)  # how long an address that signed in counts as the owner's


def _claim(key: str, limit: int) -> bool:
    """Count one more attempt against key, unless it already has `limit` in the window."""
    now = timezone.now()
    try:
        SignInFailures.objects.get_or_create(key=key, defaults={"started": now})
    except IntegrityError:
        pass  # a parallel attempt created it first
    rows = SignInFailures.objects.filter(key=key)
    rows.filter(started__lt=now - timedelta(seconds=WINDOW)).update(failures=0, started=now)  # the window passed
    return rows.filter(failures__lt=limit).update(failures=F("failures") + 1) == 1


def _release(key: str) -> None:
    SignInFailures.objects.filter(key=key, failures__gt=0).update(failures=F("failures") - 1)


def known_key(username: str, address: str) -> str:
    return f"good:{username[:140]}|{address[:45]}"


def is_known(username: str, address: str) -> bool:
    return SignInFailures.objects.filter(key=known_key(username, address), started__gte=timezone.now() - KNOWN_FOR).exists()


class LoginView(auth_views.LoginView):
    template_name = "registration/login.html"
    redirect_authenticated_user = True

    def _who(self) -> tuple[str, str]:
        username = (self.request.POST.get("username") or "").strip().lower()[:150]
        return username, self.request.META.get("REMOTE_ADDR", "?")

    def _limits(self) -> list[tuple[str, int]]:
        username, address = self._who()
        limits = [(f"addr:{address}", MAX_FAILURES)]
        if not is_known(username, address):
            limits.append((f"user:{username}", ACCOUNT_MAX_FAILURES))
        return limits

    def post(self, request, *args, **kwargs) -> HttpResponse:
        self.claimed: list[str] = []
        for key, limit in self._limits():
            if not _claim(key, limit):
                for k in self.claimed:
                    _release(k)
                return render(request, "registration/login.html", {"locked": True, "form": self.get_form()}, status=429)
            self.claimed.append(key)
        return super().post(request, *args, **kwargs)  # a failure keeps its claims

    def form_valid(self, form):
        # A success clears its address's count and takes back its own claim on the account's (the
        # failures from elsewhere still count), and remembers the address as the owner's.
        username, address = self._who()
        SignInFailures.objects.filter(key=f"addr:{address}").delete()
        for key in self.claimed:
            if key.startswith("user:"):
                _release(key)
        SignInFailures.objects.update_or_create(key=known_key(username, address),
                                                defaults={"failures": 0, "started": timezone.now()})
        return super().form_valid(form)
