"""Sign-in with a small brake on password guessing."""

from __future__ import annotations

from django.contrib.auth import views as auth_views
from django.core.cache import cache
from django.http import HttpResponse
from django.shortcuts import render

MAX_FAILURES = 5
WINDOW = 300  # seconds


class LoginView(auth_views.LoginView):
    template_name = "registration/login.html"
    redirect_authenticated_user = True

    def _key(self) -> str:
        return f"login-failures:{self.request.META.get('REMOTE_ADDR', '?')}"

    def post(self, request, *args, **kwargs) -> HttpResponse:
        if cache.get(self._key(), 0) >= MAX_FAILURES:
            return render(request, "registration/login.html", {"locked": True, "form": self.get_form()}, status=429)
        return super().post(request, *args, **kwargs)

    def form_invalid(self, form):
        key = self._key()
        cache.add(key, 0, WINDOW)
        cache.incr(key)
        return super().form_invalid(form)

    def form_valid(self, form):
        cache.delete(self._key())
        return super().form_valid(form)
