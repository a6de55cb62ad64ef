"""The recall quality table through the HTTP service and the dashboard's evaluation code: each
shipped evaluation set in a memory of its own, three modes, under the seed's fusion and the
service default. (benchmarks/ablation.py gives docs/recall-quality.md's table, seen and unseen apart.)

    .venv/bin/python benchmarks/recall_quality.py
"""

from __future__ import annotations

import io
import os
import sys
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))
os.environ.setdefault("DJANGO_SETTINGS_MODULE", "tests.settings")

import django  # noqa: E402

from tests.memory_folder import FolderService  # noqa: E402

SETS = ROOT / "dashboard" / "evalsets"


def main() -> None:
    django.setup()
    from django.conf import settings
    from django.core.management import call_command

    from dashboard.evaluation import run
    from dashboard.memory import memory
    from dashboard.models import EvalCase

    call_command("migrate", verbosity=0)
    print("| set | cases | mode | fusion | hit@1 | hit@5 | MRR |\n|---|---|---|---|---|---|---|")
    for name in sorted(p.stem for p in SETS.glob("*.json")):
        # A folder service: a set loads into a memory of its own (eval-NAME), as on `make run`.
        service = FolderService(Path(tempfile.mkdtemp()) / name).start(memories=("default",))
        try:
            settings.MEMORY_URL, settings.MEMORY_SECRET = service.url, service.secret
            call_command("load_evalset", str(SETS / f"{name}.json"), stdout=io.StringIO())
            cases = list(EvalCase.objects.filter(suite=name))
            for label, fusion in (("seed (RRF k=60)", {"preset": "seed"}), ("default", None)):
                metrics = run(memory(cases[0].memory), cases, fusion).metrics()
                modes = ("keyword", "vector", "hybrid") if fusion else ("keyword", "hybrid")
                for mode in modes:
                    m = metrics[mode]
                    print(f"| {name} | {m['n']} | {mode} | {label if mode != 'vector' else '—'} | "
                          f"{m['hit1']}/{m['n']} ({m['hit1_rate']:.0%}) | {m['hit5']}/{m['n']} ({m['hit5_rate']:.0%}) | {m['mrr']:.3f} |")
        finally:
            service.stop()


if __name__ == "__main__":
    main()
