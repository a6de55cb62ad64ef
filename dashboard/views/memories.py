"""Create a memory by name, on the service or the Worker the dashboard is pointed at."""

from __future__ import annotations

from django.contrib import messages
from django.http import HttpRequest, HttpResponse
from django.shortcuts import redirect
from django.urls import reverse
from django.views.decorators.http import require_POST

from memories.client import NotFound

from ..evaluation import is_set_memory
from ..memory import NAME, forget_status, known, memory
from ..models import CreatedMemory
from ..problems import owner_mistake


@require_POST
def memory_create(request: HttpRequest) -> HttpResponse:
    """A memory exists once a request with the secret reaches it (a Durable Object by its name; a
    file of a `serve --dir` folder): ask its stats, remember its name for the switcher, open it."""
    name = (request.POST.get("name") or "").strip()
    back = reverse("facts")
    if not NAME.fullmatch(name):
        return owner_mistake(request, "That cannot be a memory's name",
                             f"“{name[:80]}” is not a name: 1 to 64 letters, digits, '_', '.' or '-', starting with a "
                             "letter or digit (the contract's rule).", back=back)
    if is_set_memory(name):
        return owner_mistake(request, "Names starting with “eval-” are taken",
                             "They are evaluation sets' own memories (Recall quality → Import a set).", back=back)
    existed = name in known()
    try:
        memory(name).stats()
    except NotFound:
        return owner_mistake(request, "This memory service holds one memory",
                             "The service at this address serves one memory (serve --db). Serve a folder of memories "
                             "(serve --dir, as make run does) or use the Worker to have several.", back=back)
    CreatedMemory.objects.get_or_create(name=name)
    forget_status()
    messages.success(request, f"The memory “{name}” was already there." if existed else f"Created the memory “{name}”.")
    root = getattr(request, "memory_root", "/")
    return redirect(f"{root}m/{name}/")
