from django.urls import get_script_prefix, reverse

from .memory import first, known, status
from .roles import may_change, role_of

# Pages that mean the same in any memory; the switcher keeps them. A fact's own pages do not
# (#7 here is another fact, or none, there), so they switch to the facts page.
SAME_IN_EVERY_MEMORY = {"facts", "inbox", "import", "duplicates", "contradictions", "recall", "trash", "audit", "evaluation",
                        "evaluation_compare", "eval_cases"}
# Query parameters naming a fact or a position in this memory's lists: left behind on a switch.
THIS_MEMORY_ONLY = ("pin", "fact", "cursor", "page")


def memory_status(request):
    """The service status banner and the memory switcher on every page the owner sees (not on
    the login page)."""
    if not getattr(request, "user", None) or not request.user.is_authenticated:
        return {}
    current = getattr(request, "memory", None) or first()
    return {"memory_status": status(current), "memory_switch": switch_links(request, current)}


def role(request):
    """Whether the person signed in may change anything (a viewer's pages leave out what they may
    not do; roles.RoleMiddleware refuses it anyway), and their role's name."""
    user = getattr(request, "user", None)
    if user is None or not user.is_authenticated:
        return {"may_change": False}
    return {"may_change": may_change(user), "role": role_of(user)}


def switch_links(request, current: str) -> list[dict]:
    """[{name, href, current}]: this page in each of the owner's memories."""
    match = request.resolver_match
    keep = match is not None and match.url_name in SAME_IN_EVERY_MEMORY and request.method == "GET"
    here = reverse(match.url_name if keep else "facts")[len(get_script_prefix()):]  # relative to the memory's root
    params = request.GET.copy() if keep else None
    for name in THIS_MEMORY_ONLY:
        if params is not None:
            params.pop(name, None)
    query = f"?{params.urlencode()}" if params else ""
    root = getattr(request, "memory_root", "/")
    default = first()
    return [{"name": name, "current": name == current,
             "href": f"{root}{'' if name == default else f'm/{name}/'}{here}{query}"}
            for name in known()]
