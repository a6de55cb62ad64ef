"""Load evaluation sets (facts into the memory, cases into the dashboard)."""

import json
from pathlib import Path

from django.core.management.base import BaseCommand, CommandError

from dashboard.evaluation import SetError, load_set
from dashboard.memory import first
from dashboard.memory import memory as memory_client

SETS = Path(__file__).resolve().parents[2] / "evalsets"
# Sets about the demo owner or nobody in particular; the holdout*.json sets are other households: each
# goes into a memory of its own (docs/recall-quality.md).
SHIPPED = [SETS / "personal.json", SETS / "lookalikes.json"]


class Command(BaseCommand):
    help = "Load evaluation set files (default: personal.json and lookalikes.json from dashboard/evalsets/)."

    def add_arguments(self, parser):
        parser.add_argument("files", nargs="*", help="set files (JSON); none loads the shipped sets")
        parser.add_argument("--memory", help="the memory, by name, to load into (default: the first configured)")

    def handle(self, *args, files, memory: str | None, **options):
        memory = memory or first()
        paths = [Path(f) for f in files] or SHIPPED
        for path in paths:
            try:
                data = json.loads(path.read_text(encoding="utf-8"))
                name, created, cases = load_set(memory_client(memory), data, memory=memory)
            except (OSError, ValueError) as e:  # SetError and JSONDecodeError are ValueErrors
                kind = "is not of the set format" if isinstance(e, SetError) else "cannot be read"
                raise CommandError(f"{path} {kind}: {e}") from None
            self.stdout.write(f"{path.name}: set {name!r}, {cases} cases, {created} new facts in the memory")
