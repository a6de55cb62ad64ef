"""Evaluation sets never write into the owner's memory: an imported set runs in a memory of its
own (eval-NAME), a case saved from the debugger on the memory it was saved from; running is a
POST; cases show the expected facts' text and say when one is gone (issue 20, item 1)."""

from __future__ import annotations

import io
import json
import re

import httpx
import pytest
from django.core.management import call_command
from django.core.management.base import CommandError
from django.urls import reverse

from dashboard.models import EvalCase, EvalRun
from memories.client import MemoryClient
from tests.fake_memory import fact
from tests.test_dashboard_rough_edges import AddingMemory

pytestmark = pytest.mark.django_db

SET = {"name": "tiny", "facts": [{"text": "Priya is the owner's sister."}, {"text": "The cat is Pixel."}],
       "cases": [{"question": "Who is Priya?", "expected": ["Priya is the owner's sister."]}]}


def upload(data: dict, name: str = "tiny.json") -> io.BytesIO:
    f = io.BytesIO(json.dumps(data).encode())
    f.name = name
    return f


@pytest.fixture
def memories(mock_memories, monkeypatch):
    """The owner's memories "default" and "work" (configured), and "eval-tiny" reachable on the
    same service but configured nowhere, as a set's own memory is."""
    from dashboard import memory

    owned = {"default": AddingMemory(fact(1, "The owner prefers metric units.")), "work": AddingMemory(fact(2, "Standup is at nine."))}
    mock_memories(owned)
    evals = AddingMemory()
    url = memory.url_of("eval-tiny")

    def handler(request):
        request.url = request.url.copy_with(path=request.url.path[len("/memories/eval-tiny"):] or "/")
        return evals(request)

    monkeypatch.setitem(memory._clients, memory.client_key("eval-tiny"),
                        MemoryClient(url, "mock-secret", transport=httpx.MockTransport(handler), retries=0))
    return {**owned, "eval-tiny": evals}


def writes(fake) -> list[str]:
    return [r.method for r in fake.requests if r.method in ("POST", "PATCH", "DELETE") and r.url.path != "/recall"]


def recalls(fake) -> int:
    return sum(1 for r in fake.requests if r.url.path == "/recall")


def test_an_imported_set_goes_into_a_memory_of_its_own_never_the_owners(owner_client, memories):
    asked = owner_client.post(reverse("eval_import"), {"file": upload(SET)}).content.decode()
    assert re.search(r'<code id="import-target">eval-tiny</code>', asked)
    done = owner_client.post(reverse("eval_import"), {"confirm": "yes"}, follow=True).content.decode()
    assert "Imported set “tiny”: 1 case, 2 new facts stored in the memory “eval-tiny”." in done
    assert writes(memories["default"]) == [] and writes(memories["work"]) == []
    assert sorted(f["text"] for f in memories["eval-tiny"].facts.values()) == ["Priya is the owner's sister.", "The cat is Pixel."]
    assert list(EvalCase.objects.values_list("memory", "suite")) == [("eval-tiny", "tiny")]
    # The page says which memory each set runs on, from any of the owner's memories.
    for page in ("/evaluate/", "/m/work/evaluate/"):
        html = owner_client.get(page).content.decode()
        assert re.search(r'tiny \(1\)</label>\s*<small class="runs-on">on memory <code>eval-tiny</code>', html), page


def test_the_same_import_from_another_memory_still_goes_into_the_sets_memory(owner_client, memories):
    owner_client.post("/m/work/evaluate/import", {"file": upload(SET)})
    owner_client.post("/m/work/evaluate/import", {"confirm": "yes"})
    assert writes(memories["work"]) == [] and len(memories["eval-tiny"].facts) == 2


def test_a_set_memory_stays_out_of_the_switcher(owner_client, memories):
    owner_client.post(reverse("eval_import"), {"file": upload(SET)})
    owner_client.post(reverse("eval_import"), {"confirm": "yes"})
    nav = re.search(r'<nav class="memories".*?</nav>', owner_client.get("/").content.decode(), re.S).group(0)
    assert "eval-tiny" not in nav and "work" in nav
    # ...but its facts are reachable from its cases' links (a Worker cannot list it).
    fid = EvalCase.objects.get().expected_ids[0]
    assert owner_client.get(f"/m/eval-tiny/facts/{fid}/").status_code == 200
    assert owner_client.get("/m/eval-nothing/").status_code == 404


def test_running_is_a_post_and_a_get_only_shows(owner_client, memories):
    owner_client.post(reverse("eval_import"), {"file": upload(SET)})
    owner_client.post(reverse("eval_import"), {"confirm": "yes"})
    shown = owner_client.get(reverse("evaluation"), {"run": 1, "suite": "tiny"})
    assert shown.status_code == 200 and 'id="report-tiny"' not in shown.content.decode()
    assert recalls(memories["eval-tiny"]) == 0 and not EvalRun.objects.exists()
    form = re.search(r'<form method="(\w+)" action="/evaluate/"', shown.content.decode())
    assert form and form.group(1) == "post"

    ran = owner_client.post(reverse("evaluation"), {"suite": "tiny"}).content.decode()
    assert 'id="report-tiny"' in ran and "1 case on memory <code>eval-tiny</code>" in ran
    assert recalls(memories["eval-tiny"]) == 1 and recalls(memories["default"]) == 0
    assert list(EvalRun.objects.values_list("memory", "suite")) == [("eval-tiny", "tiny")]
    owner_client.get(reverse("evaluation"), {"run": 1})  # a reload of an old ?run=1 address
    assert EvalRun.objects.count() == 1


def test_a_case_saved_from_the_debugger_runs_on_the_memory_it_was_saved_from(owner_client, memories):
    owner_client.post("/m/work/evaluate/cases", {"question": "When is standup?", "expected": "2"})
    assert list(EvalCase.objects.values_list("memory", flat=True)) == ["work"]
    ran = owner_client.post("/m/work/evaluate/", {"suite": "mine"}).content.decode()
    assert "on memory <code>work</code>" in ran
    assert recalls(memories["work"]) == 1 and recalls(memories["default"]) == 0


def test_cases_show_the_expected_facts_text_and_say_when_one_is_gone(owner_client, memories):
    memories["default"].facts[3] = fact(3, "Leo swims on Wednesdays.")
    kept = EvalCase.objects.create(memory="default", suite="mine", question="What units?", expected_ids=[1])
    gone = EvalCase.objects.create(memory="default", suite="mine", question="Who swims?", expected_ids=[3])
    del memories["default"].facts[3]

    listed = owner_client.get(reverse("eval_cases")).content.decode()
    row = re.search(rf'<tr id="case-{kept.id}">.*?</tr>', listed, re.S).group(0)
    assert re.search(r'<a href="/facts/1/">#1</a> The owner prefers metric units.', row)
    row = re.search(rf'<tr id="case-{gone.id}">.*?</tr>', listed, re.S).group(0)
    assert 'class="answer gone"' in row and "gone from the memory" in row

    edit = owner_client.get(reverse("eval_case_edit", args=[kept.id])).content.decode()
    assert re.search(r'<ul class="answers"[^>]*><li class="answer"><a href="/facts/1/">#1</a> The owner prefers metric units.', edit)

    ran = owner_client.post(reverse("evaluation"), {"suite": "mine"}).content.decode()
    assert "1 case not scored: the memory no longer holds its expected fact." in ran
    assert "“Who swims?” expected #3 (gone)" in ran
    assert re.search(r'<tr class="mode-hybrid"><th scope="row">hybrid</th>\s*<td class="num">1/1', ran)  # not a silent miss
    assert recalls(memories["default"]) == 1  # the gone case is not asked


def test_a_failing_case_shows_what_was_expected_beside_what_came_first(owner_client, memories):
    memories["default"].facts[3] = fact(3, "The owner's bike is blue.")
    EvalCase.objects.create(memory="default", suite="mine", question="What colour is the bike?", expected_ids=[3])
    ran = owner_client.post(reverse("evaluation"), {"suite": "mine"}).content.decode()
    failing = re.search(r'<table class="failures">.*?</table>', ran, re.S).group(0)
    assert '<td class="expected"><p>#3 The owner&#x27;s bike is blue.</p></td>' in failing
    assert '<td class="put-first">#1 The owner prefers metric units.</td>' in failing  # not the site header's .top


def test_deleting_a_fact_a_case_expects_warns_first(owner_client, memories):
    EvalCase.objects.create(memory="default", suite="mine", question="What units?", expected_ids=[1])
    EvalCase.objects.create(memory="work", suite="mine", question="Other memory", expected_ids=[1])
    page = owner_client.get(reverse("fact_delete", args=[1])).content.decode()
    warning = re.search(r'<div class="alert warning" id="expected-by"[^>]*>.*?</div>', page, re.S).group(0)
    assert "1 evaluation case expects this fact" in warning and "What units?" in warning and "Other memory" not in warning
    listed = owner_client.get(reverse("facts")).content.decode()
    assert re.search(r'hx-confirm="Delete fact #1: [^"]*An evaluation case expects it', listed)


def test_load_evalset_aims_at_the_sets_own_memory_and_explains_a_one_memory_service(memories, tmp_path):
    out = io.StringIO()
    path = tmp_path / "tiny-set.json"
    path.write_text(json.dumps(SET))
    if True:
        call_command("load_evalset", str(path), stdout=out)
        assert "set 'tiny', 1 case, 2 new facts in the memory 'eval-tiny'" in out.getvalue()
        assert writes(memories["default"]) == []

        from dashboard import memory

        def one_memory(request):
            return httpx.Response(404, json={"error": {"code": "not_found", "message": "no route"}})

        memory._clients[memory.client_key("eval-tiny")] = MemoryClient(memory.url_of("eval-tiny"), "s",
                                                                      transport=httpx.MockTransport(one_memory), retries=0)
        with pytest.raises(CommandError, match="serves only one"):
            call_command("load_evalset", str(path), stdout=io.StringIO())

        def down(request):
            raise httpx.ConnectError("refused")

        memory._clients[memory.client_key("eval-tiny")] = MemoryClient(memory.url_of("eval-tiny"), "s",
                                                                      transport=httpx.MockTransport(down), retries=0)
        with pytest.raises(CommandError, match="Start the memory first"):
            call_command("load_evalset", str(path), stdout=io.StringIO())
