"""Behind a reverse proxy, REMOTE_ADDR is the proxy's address; the browser's is the last one the
proxy added to X-Forwarded-For. The sign-in brake counts failures by address (views/account.py):
with every request from the proxy's one address, five wrong passwords from anywhere would lock
the owner out too.

Only a request from an address FORWARDED_ALLOW_IPS lists is believed (gunicorn reads the same
variable for the scheme header): anyone else could write any X-Forwarded-For they like. The
rightmost entry is the one the proxy wrote; those before it came from the client.
"""

from __future__ import annotations

from django.conf import settings


class ForwardedForMiddleware:
    def __init__(self, get_response):
        self.get_response = get_response

    def __call__(self, request):
        forwarded = request.META.get("HTTP_X_FORWARDED_FOR", "")
        trusted = settings.FORWARDED_ALLOW_IPS
        if forwarded and ("*" in trusted or request.META.get("REMOTE_ADDR") in trusted):
            request.META["REMOTE_ADDR"] = forwarded.rsplit(",", 1)[-1].strip()[:45]  # 45: the longest IPv6 text
        return self.get_response(request)
