"""Create a memory by name, on the service or the Worker the dashboard is pointed at."""

from __future__ import annotations

from django.contrib import messages
from django.http import HttpRequest, HttpResponse
from django.shortcuts import redirect
from django.urls import reverse
from django.views.decorators.http import require_POST

from memories.client import NotFound

from ..evaluation import is_set_memory
from ..memory import NAME, forget_status, memory
from ..models import CreatedMemory
from ..problems import owner_mistake


@require_POST
def memory_create(request: HttpRequest) -> HttpResponse:
    """PUT /memories/NAME on the service (a Durable Object by its name, or a file of a `serve --dir`
    folder): "Created" only when the service made it now. The name is remembered for the
    switcher, and the memory opens."""
    name = (request.POST.get("name") or "").strip()
    back = reverse("facts")
    if not NAME.fullmatch(name):
        return owner_mistake(request, "That cannot be a memory's name",
                             f"“{name[:80]}” is not a name: 1 to 64 letters, digits, '_', '.' or '-', starting with a "
                             "letter or digit (the contract's rule).", back=back)
    if is_set_memory(name):
        return owner_mistake(request, "Names starting with “eval-” are taken",
                             "They are evaluation sets' own memories (Recall quality → Import a set).", back=back)
    try:
        created = memory(name).create_memory(name)
    except NotFound:
        return owner_mistake(request, "This memory service holds one memory",
                             "The service at this address serves one memory (serve --db). Serve a folder of memories "
                             "(serve --dir, as make run does) or use the Worker to have several.", back=back)
    CreatedMemory.objects.get_or_create(name=name)
    forget_status()
    messages.success(request, f"Created the memory “{name}”." if created else f"The memory “{name}” already exists.")
    root = getattr(request, "memory_root", "/")
    return redirect(f"{root}m/{name}/")
