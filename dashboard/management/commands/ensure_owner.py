"""Create the owner's account on first run and say how to sign in."""

import os
import secrets

from django.contrib.auth import get_user_model
from django.core.management.base import BaseCommand


class Command(BaseCommand):
    help = "Create the owner account if there is none, printing its one-time password."

    def add_arguments(self, parser):
        parser.add_argument("--username", default="owner")
        parser.add_argument("--at", default=f"http://127.0.0.1:{os.environ.get('DASHBOARD_PORT') or 8000}/",
                            help="the dashboard's address, for the sign-in hint (make serve says its own)")

    def handle(self, *args, username, at, **options):
        User = get_user_model()
        if User.objects.filter(is_superuser=True).exists():
            return
        password = secrets.token_urlsafe(12)
        User.objects.create_superuser(username=username, password=password, email="")
        self.stdout.write(
            f"\nThe owner account was created. Sign in at {at}login/ with\n"
            f"    username: {username}\n    password: {password}\n"
            f"Change it with: .venv/bin/python manage.py changepassword {username}\n"
        )
