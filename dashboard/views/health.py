"""`/healthz`: for a monitor or a proxy's health check, without signing in.

It says whether the dashboard reaches its memory and its own database, and how long the memory
took: never a secret, the memory's address or anything the memory holds (not even a count).
"""

from __future__ import annotations

import time

from django.contrib.auth.decorators import login_not_required
from django.db import DatabaseError, connection
from django.http import HttpRequest, JsonResponse
from django.views.decorators.http import require_safe

from memories.client import MemoryServiceError

from ..memory import memory, problem_words, start_deadline

HEALTH_TIMEOUT = 3.0  # seconds: a monitor gives up soon after, and a memory that slow is down for the owner too


@login_not_required
@require_safe
def healthz(request: HttpRequest) -> JsonResponse:
    start_deadline(HEALTH_TIMEOUT)  # the request's own, shorter than a page's (MemoryErrorMiddleware clears it)
    start = time.monotonic()
    reach = {"reachable": True}
    try:
        memory(request.memory).health()  # without the right secret the answer lacks its fields: a failure too
    except MemoryServiceError as e:
        reach = {"reachable": False, "problem": problem_words(e)}
    reach["latency_ms"] = round((time.monotonic() - start) * 1000, 1)
    try:
        connection.ensure_connection()
        database = True
    except DatabaseError:
        database = False
    ok = reach["reachable"] and database
    return JsonResponse({"ok": ok, "memory": reach, "database": database}, status=200 if ok else 503)
