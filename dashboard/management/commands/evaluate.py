"""Run the evaluation cases against the memory service and print hit@1, hit@5 and MRR per mode."""

import json

from django.core.management.base import BaseCommand, CommandError

from dashboard.evaluation import MODES, compare, run
from dashboard.memory import memory as memory_client
from dashboard.models import EvalCase


def parse_fusion(text: str | None) -> dict | None:
    if not text:
        return None
    if not text.lstrip().startswith("{"):
        return {"preset": text}
    try:
        value = json.loads(text)
    except ValueError as e:
        raise CommandError(f"--fusion is not JSON: {e}") from None
    if not isinstance(value, dict):
        raise CommandError("--fusion must be a preset name or a JSON object")
    return value


class Command(BaseCommand):
    help = "Evaluate recall on the stored cases: keyword only, vector only and hybrid."

    def add_arguments(self, parser):
        parser.add_argument("--suite", action="append", help="only these suites (repeatable); default all")
        parser.add_argument("--fusion", help='a preset ("default", "seed") or a JSON object of fusion settings')
        parser.add_argument("--compare", dest="against", help="a second fusion setting: report the cases that got better or worse")
        parser.add_argument("--failures", action="store_true", help="list the cases hybrid did not put first")
        parser.add_argument("--memory", help="only the cases that run on this memory, by name (default: every set, "
                                                "each on its own memory)")

    def handle(self, *args, suite, fusion, against: str | None, failures: bool, memory: str | None, **options):
        cases = EvalCase.objects.all()
        if memory:
            cases = cases.filter(memory=memory)
        if suite:
            cases = cases.filter(suite__in=suite)
        groups = sorted(set(cases.values_list("suite", "memory")))
        if not groups:
            raise CommandError("no evaluation cases: load some with `python manage.py load_evalset`")
        a, b = parse_fusion(fusion), parse_fusion(against)
        self.stdout.write(f"fusion: {json.dumps(a or 'service default')}" + (f"  vs  {json.dumps(b)}" if b else ""))
        self.stdout.write("| set | cases | mode | hit@1 | hit@5 | MRR |\n|---|---|---|---|---|---|")
        for name, where in groups:
            client = memory_client(where)
            members = list(cases.filter(suite=name, memory=where))
            report = run(client, members, a)
            for r in report.gone:
                self.stdout.write(f"    not scored, its expected fact is gone from {where!r}: {r.question}")
            for mode, m in report.metrics().items():
                self.stdout.write(f"| {name} | {m['n']} | {mode} | {m['hit1']}/{m['n']} ({m['hit1_rate']:.0%}) | "
                                  f"{m['hit5']}/{m['n']} ({m['hit5_rate']:.0%}) | {m['mrr']:.3f} |")
            if b:
                other = run(client, members, b)
                m = other.metrics()["hybrid"]
                better, worse = compare(report, other)
                self.stdout.write(f"| {name} | {m['n']} | hybrid (B) | {m['hit1']}/{m['n']} ({m['hit1_rate']:.0%}) | "
                                  f"{m['hit5']}/{m['n']} ({m['hit5_rate']:.0%}) | {m['mrr']:.3f} |")
                for c in better + worse:
                    self.stdout.write(f"    {'better' if c.better else 'WORSE '} {c.a} -> {c.b}: {c.question}")
            if failures:
                for r in report.failures():
                    ranks = ", ".join(f"{mode} {r.ranks[mode] or '-'}" for mode in MODES)
                    self.stdout.write(f"    miss ({ranks}): {r.question}  [top: {r.top}]")
