"""The people at the desk (owners only: roles.OWNERS_ONLY): add an account as an owner or a viewer,
change a role, give a new password, remove an account.

A password is made here and shown once, on the page that answers the form (never in a message,
which would travel in a cookie): the owner hands it over. A removed account cannot sign in and
its sessions end, but its name stays taken, so "dashboard alice" in the memory's history never
comes to mean someone else. The last owner cannot make themselves a viewer, and no one removes
themselves: the desk always keeps someone to change it."""

from __future__ import annotations

import secrets

from django import forms
from django.contrib import messages
from django.contrib.auth import get_user_model, update_session_auth_hash
from django.contrib.auth.validators import ASCIIUsernameValidator
from django.db import transaction
from django.http import HttpRequest, HttpResponse
from django.shortcuts import get_object_or_404, redirect, render
from django.urls import reverse
from django.views.decorators.http import require_http_methods, require_POST

from ..memory import MAX_CLIENT
from ..models import Account
from ..problems import owner_mistake
from ..roles import owners, role_of

# The memory's history names a person after "dashboard-import ", within the header's 64 characters.
MAX_NAME = MAX_CLIENT - len("dashboard-import ")


class AccountForm(forms.Form):
    username = forms.CharField(max_length=MAX_NAME, validators=[ASCIIUsernameValidator()],
                               help_text=f"Letters, digits and @ . + - _, at most {MAX_NAME}: the memory's history names "
                                         "the person by it.")
    role = forms.ChoiceField(choices=Account.ROLES, initial=Account.VIEWER, widget=forms.RadioSelect)

    def clean_username(self) -> str:
        name = self.cleaned_data["username"]
        if get_user_model().objects.filter(username__iexact=name).exists():
            raise forms.ValidationError("There is an account of that name, or there was: a removed account's name "
                                        "stays taken, so the history's entries keep meaning one person.")
        return name


def new_password() -> str:
    return secrets.token_urlsafe(12)


def rows() -> list[dict]:
    people = get_user_model().objects.select_related("desk").order_by("-is_active", "username")
    return [{"user": u, "role": role_of(u)} for u in people]


@require_http_methods(["GET", "POST"])
def accounts(request: HttpRequest) -> HttpResponse:
    """The accounts and the form that adds one; a POST adds it and shows its password once."""
    form = AccountForm(request.POST or None)
    context: dict = {"form": form}
    status = 200
    if request.method == "POST":
        if form.is_valid():
            password = new_password()
            with transaction.atomic():
                user = get_user_model().objects.create_user(form.cleaned_data["username"], password=password)
                Account.objects.create(user=user, role=form.cleaned_data["role"])
            context.update(form=AccountForm(), made={"name": user.get_username(), "password": password,
                                                     "role": form.cleaned_data["role"]})
        else:
            status = 400
    return render(request, "accounts.html", {**context, "rows": rows(), "roles": Account.ROLES}, status=status)


def last_owner(user) -> bool:
    return role_of(user) == Account.OWNER and not owners().exclude(pk=user.pk).exists()


@require_POST
def account_role(request: HttpRequest, user_id: int) -> HttpResponse:
    user = get_object_or_404(get_user_model(), pk=user_id, is_active=True)
    role = request.POST.get("role")
    if role not in dict(Account.ROLES):
        return owner_mistake(request, "Unknown role", "Choose owner or viewer.", back=reverse("accounts"),
                             back_label="The accounts")
    if role == Account.VIEWER and last_owner(user):
        return owner_mistake(request, "The desk needs an owner", f"{user.get_username()} is its only owner: make "
                             "another account an owner first.", back=reverse("accounts"), back_label="The accounts")
    Account.objects.update_or_create(user=user, defaults={"role": role})
    messages.success(request, f"{user.get_username()} is now {'an owner' if role == Account.OWNER else 'a viewer'}, "
                              "from their next click.")
    return redirect("accounts")


@require_POST
def account_password(request: HttpRequest, user_id: int) -> HttpResponse:
    """A new password, shown once; the old one stops working (and so do its sessions)."""
    user = get_object_or_404(get_user_model(), pk=user_id, is_active=True)
    password = new_password()
    user.set_password(password)
    user.save(update_fields=["password"])
    made = {"name": user.get_username(), "password": password, "role": role_of(user), "again": True}
    if user == request.user:
        update_session_auth_hash(request, user)  # the owner who asked stays signed in
    return render(request, "accounts.html", {"form": AccountForm(), "made": made, "rows": rows(), "roles": Account.ROLES})


@require_POST
def account_remove(request: HttpRequest, user_id: int) -> HttpResponse:
    user = get_object_or_404(get_user_model(), pk=user_id, is_active=True)
    if user == request.user:  # (so an owner always stays: the one asking)
        return owner_mistake(request, "You cannot remove yourself", "Another owner can remove your account.",
                             back=reverse("accounts"), back_label="The accounts")
    user.is_active = False
    user.save(update_fields=["is_active"])
    messages.success(request, f"Removed {user.get_username()}: the account cannot sign in, and its sessions have ended.")
    return redirect("accounts")
