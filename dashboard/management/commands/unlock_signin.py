"""Clear the brake on sign-in guessing, for an owner kept out by someone else's wrong guesses."""

from django.core.management.base import BaseCommand

from dashboard.models import SignInFailures


class Command(BaseCommand):
    help = ("Clear the counts of failed sign-ins (all of them, or one account's or one address's), "
            "so the owner can sign in at once. Addresses remembered as the owner's are kept.")

    def add_arguments(self, parser):
        parser.add_argument("--username", help="only this account's count")
        parser.add_argument("--address", help="only this address's count (an IP address)")

    def handle(self, *args, username=None, address=None, **options):
        rows = SignInFailures.objects.exclude(key__startswith="good:")
        if username or address:
            keys = [*([f"user:{username.strip().lower()}"] if username else []), *([f"addr:{address.strip()}"] if address else [])]
            rows = rows.filter(key__in=keys)
        braked = [r.key for r in rows if r.failures]
        rows.delete()
        if braked:
            self.stdout.write(f"Cleared the sign-in brake on {', '.join(braked)}.")
        else:
            self.stdout.write("Nothing was braked.")
