from .memory import status


def memory_status(request):
    """The service status banner on every page the owner sees (not on the login page)."""
    if not getattr(request, "user", None) or not request.user.is_authenticated:
        return {}
    return {"memory_status": status()}
