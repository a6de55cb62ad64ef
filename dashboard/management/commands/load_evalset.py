"""Load evaluation sets: each set's facts into a memory of its own ("eval-" and the set's name,
on the same service or Worker as the owner's), its cases into the dashboard, run on that memory."""

from pathlib import Path

from django.core.management.base import BaseCommand, CommandError
from django.template.defaultfilters import pluralize

from dashboard.evaluation import SHIPPED, SetError, load_set, read_set_file
from dashboard.memory import memory as memory_client
from dashboard.memory import url_of
from memories.client import MemoryServiceError, NotFound, Unreachable


class Command(BaseCommand):
    help = ("Load evaluation set files (default: personal.json and lookalikes.json from dashboard/evalsets/), "
            "each into its own memory eval-NAME, never into one the owner uses.")

    def add_arguments(self, parser):
        parser.add_argument("files", nargs="*", help="set files (JSON); none loads the shipped sets")

    def handle(self, *args, files, **options):
        paths = [Path(f) for f in files] or SHIPPED
        for path in paths:
            try:
                data, target = read_set_file(path)
                name, created, cases = load_set(memory_client(target), data, memory=target)
            except (OSError, ValueError) as e:  # SetError and JSONDecodeError are ValueErrors
                kind = "is not of the set format" if isinstance(e, SetError) else "cannot be read"
                raise CommandError(f"{path} {kind}: {e}") from None
            except Unreachable as e:
                raise CommandError(f"{e}. Start the memory first (make run or make run-worker), then load the sets.") from None
            except NotFound:
                raise CommandError(f"{url_of(target)} is not a memory: the service serves only one (serve --db). "
                                   "A set runs in a memory of its own; serve a folder (serve --dir, as make run does) "
                                   "or use the Worker.") from None
            except MemoryServiceError as e:
                raise CommandError(f"{path}: the memory refused the set ({e}); nothing of it was kept.") from None
            self.stdout.write(f"{path.name}: set {name!r}, {cases} case{pluralize(cases)}, {created} new fact{pluralize(created)} in the memory {target!r}")
