"""Evaluation sets: metrics by hand, the set format's errors, and the shipped sets on the real service."""

import io
import importlib
import json
from pathlib import Path

import pytest
from django.core.management import call_command
from django.core.management.base import CommandError
from django.urls import reverse

from dashboard.evaluation import CaseResult, Report, SetError, compare, first_rank, metrics, parse_set

SETS = Path(__file__).resolve().parent.parent / "dashboard" / "evalsets"


def test_metrics_by_hand():
    m = metrics([1, 2, None, 5, 6])
    assert (m["n"], m["hit1"], m["hit5"]) == (5, 1, 3)
    assert m["mrr"] == pytest.approx((1 + 1 / 2 + 0 + 1 / 5 + 1 / 6) / 5)
    assert m["hit1_rate"] == pytest.approx(0.2) and m["hit5_rate"] == pytest.approx(0.6)


def test_metrics_of_nothing_are_zero():
    assert metrics([]) == {"n": 0, "hit1": 0, "hit5": 0, "hit1_rate": 0.0, "hit5_rate": 0.0, "mrr": 0.0}


def test_first_rank_takes_the_best_placed_expected_fact():
    assert first_rank([9, 4, 7], {7, 4}) == 2
    assert first_rank([9], {1}) is None


def test_compare_splits_better_and_worse():
    def report(ranks):
        return Report({}, [CaseResult(i, f"q{i}", "", [1], {"keyword": None, "vector": None, "hybrid": r}) for i, r in enumerate(ranks)])

    better, worse = compare(report([2, 1, None, 3]), report([1, 1, 4, None]))
    assert [(c.question, c.a, c.b) for c in better] == [("q0", 2, 1), ("q2", None, 4)]
    assert [(c.question, c.a, c.b) for c in worse] == [("q3", 3, None)]


@pytest.mark.parametrize("data,says", [
    ([], "JSON object"),
    ({"facts": [{"text": "a"}], "cases": [{"question": "q", "expected": ["a"]}]}, '"name"'),
    ({"name": "x", "facts": [], "cases": [{"question": "q", "expected": ["a"]}]}, '"facts" must be a non-empty list'),
    ({"name": "x", "facts": [{"text": "a"}], "cases": []}, '"cases" must be a non-empty list'),
    ({"name": "x", "facts": [{"text": ""}], "cases": [{"question": "q", "expected": ["a"]}]}, 'facts[0] needs a non-empty "text"'),
    ({"name": "x", "facts": [{"text": "a", "type": "opinion"}], "cases": [{"question": "q", "expected": ["a"]}]}, "facts[0].type"),
    ({"name": "x", "facts": [{"text": "a"}], "cases": [{"question": "", "expected": ["a"]}]}, 'cases[0] needs a non-empty "question"'),
    ({"name": "x", "facts": [{"text": "a"}], "cases": [{"question": "q", "expected": "a"}]}, "cases[0].expected must be a non-empty list"),
    ({"name": "x", "facts": [{"text": "a"}], "cases": [{"question": "q", "expected": ["b"]}]}, "not in \"facts\": 'b'"),
    ({"name": "x", "facts": [{"text": "a"}], "cases": [{"question": "q", "expected": ["a"], "type": "x"}]}, "cases[0].type"),
])
def test_set_format_errors_say_where(data, says):
    with pytest.raises(SetError) as e:
        parse_set(data)
    assert says in str(e.value)


@pytest.mark.parametrize("path", sorted(SETS.glob("*.json")), ids=lambda p: p.stem)
def test_shipped_sets_are_valid(path):
    name, facts, cases = parse_set(json.loads(path.read_text()))
    assert name == path.stem and facts and cases


@pytest.mark.parametrize("name", ["lookalikes", "relations", "relations2"])
def test_a_generated_set_is_what_its_generator_makes(name):
    generate = importlib.import_module(f"dashboard.evalsets.{name}").generate

    assert json.loads((SETS / f"{name}.json").read_text()) == generate()


# What docs/recall-quality.md's table reports, held as floors. homefinance (unseen) is the set where
# the default ranks questions lower than vector search alone at rank 1; relations2 (unseen) the
# one where it loses one at rank 5 (docs/recall-quality.md).
BEHIND_VECTOR_AT_1 = {"homefinance": 2}
BEHIND_VECTOR_AT_5 = {"relations2": 1}


@pytest.mark.django_db
@pytest.mark.parametrize("suite", sorted(p.stem for p in SETS.glob("*.json")))
def test_the_default_recall_holds_on_each_shipped_set(suite, settings, tmp_path):
    """Each set in a memory of its own (they are different memories), through real HTTP."""
    from dashboard.evaluation import run
    from dashboard.memory import memory
    from dashboard.models import EvalCase
    from tests.memory_folder import FolderService

    service = FolderService(tmp_path / suite).start()  # the set goes into a memory of its own there, eval-SUITE
    try:
        settings.MEMORY_URL, settings.MEMORY_SECRET = service.url, service.secret
        call_command("load_evalset", str(SETS / f"{suite}.json"), stdout=io.StringIO())
        cases = list(EvalCase.objects.filter(suite=suite))
        m = run(memory(cases[0].memory), cases).metrics()
    finally:
        service.stop()
    assert m["hybrid"]["hit1"] >= m["vector"]["hit1"] - BEHIND_VECTOR_AT_1.get(suite, 0), m
    assert m["hybrid"]["hit5"] >= m["vector"]["hit5"] - BEHIND_VECTOR_AT_5.get(suite, 0), m
    # The keyword list here is the hybrid recall's own, expansions included: on holdout3 it ties.
    assert m["hybrid"]["hit1"] >= m["keyword"]["hit1"] and m["hybrid"]["mrr"] >= m["keyword"]["mrr"], m


@pytest.mark.django_db
def test_load_and_evaluate_commands(live_memories, tmp_path):
    out = io.StringIO()
    call_command("load_evalset", stdout=out)
    assert "set 'lookalikes', 100 cases" in out.getvalue() and "set 'personal', 29 cases" in out.getvalue()
    assert "in the memory 'eval-personal'" in out.getvalue()
    assert "holdout" not in out.getvalue()  # another household: loaded on its own, into its own memory
    out = io.StringIO()
    call_command("evaluate", "--suite", "personal", "--compare", "seed", "--failures", stdout=out)
    table = out.getvalue()
    assert "| personal | 29 | keyword |" in table and "| personal | 29 | hybrid (B) |" in table
    bad = tmp_path / "bad-set.json"
    bad.write_text('{"name": "x"}')
    with pytest.raises(CommandError, match="is not of the set format"):
        call_command("load_evalset", str(bad), stdout=io.StringIO())


@pytest.mark.django_db
def test_evaluate_without_cases_says_how_to_load_them(live_memories):
    with pytest.raises(CommandError, match="load_evalset"):
        call_command("evaluate")


@pytest.mark.django_db
def test_the_pages_run_compare_and_import(owner_client, live_memories):
    from dashboard.models import EvalCase

    with (SETS / "lookalikes.json").open("rb") as f:
        asked = owner_client.post(reverse("eval_import"), {"file": f})
    assert "will be written into the memory" in asked.content.decode() and not EvalCase.objects.exists()
    response = owner_client.post(reverse("eval_import"), {"confirm": "yes"}, follow=True)
    assert "Imported set “lookalikes”: 100 cases" in response.content.decode()

    page = owner_client.post(reverse("evaluation"), {"suite": "lookalikes"}).content.decode()
    assert 'id="report-lookalikes"' in page and 'class="mode-hybrid"' in page

    compared = owner_client.get(reverse("evaluation_compare"),
                                {"run": 1, "suite": "lookalikes", "a": "seed", "b": '{"preset": "default", "phrases": true}'})
    html = compared.content.decode()
    better = int(html.split("Better under B (")[1].split(")")[0])
    assert better >= 10  # phrases fix look-alikes the seed's rank fusion lost ("X's R" in the asked order)
    assert "rank 2 → 1" in html or "rank 3 → 1" in html
    assert "A <small>rrf</small>" in html and "B <small>info + phrases + expansion + rerank</small>" in html

    bad = owner_client.get(reverse("evaluation_compare"), {"run": 1, "a": "{not json", "b": "default"}, follow=True)
    assert "not a preset or a JSON object" in bad.content.decode()

    broken = io.BytesIO(b'{"name": "x", "facts": [], "cases": []}')
    broken.name = "broken.json"
    response = owner_client.post(reverse("eval_import"), {"file": broken})
    assert response.status_code == 400 and "broken.json is not of the set format" in response.content.decode()

    owner_client.post(reverse("fact_add"), {"text": "Priya is the owner's sister.", "type": "fact"})
    fid = owner_client.get(reverse("facts"), {"q": "Priya is the owner"}).content.decode().split('data-fact-id="')[1].split('"')[0]
    owner_client.post(reverse("eval_case_add"), {"question": "Who is Priya?", "expected": fid})
    assert EvalCase.objects.get(suite="mine", question="Who is Priya?").memory == "default"
