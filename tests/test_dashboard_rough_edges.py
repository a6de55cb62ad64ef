"""The dashboard's rough edges: the owner's typos get a 400/404 that says what was wrong, a slow
memory holds a page for one deadline, the sign-in brake holds under parallel guesses, and more."""

from __future__ import annotations

import io
import json
import socket
import threading
import time

import httpx
import pytest
from django.test import Client
from django.urls import reverse

from tests.fake_memory import FakeMemory, edit_conflict, fact

pytestmark = pytest.mark.django_db

SERVICE_ERROR = "the memory service reported an error"


def assert_owner_mistake(response, status: int, says: str) -> None:
    html = response.content.decode()
    assert response.status_code == status, (response.status_code, html[:400])
    assert says in html, html[:2000]
    assert "reported an error" not in html and "Traceback" not in html


class AddingMemory(FakeMemory):
    """The fake memory, plus POST /facts (refusing texts listed in `refuse`) and /recall."""

    def __init__(self, *facts, refuse=()):
        super().__init__(*facts)
        self.refuse = set(refuse)
        self.next_id = 100

    def __call__(self, request):
        if request.url.path == "/facts" and request.method == "POST":
            self.requests.append(request)
            body = json.loads(request.content)
            if body["text"] in self.refuse:
                return httpx.Response(400, json={"error": {"code": "invalid", "message": "text refused"}})
            for f in self.facts.values():
                if f["text"] == body["text"]:
                    return httpx.Response(200, json={"fact": f, "created": False, "duplicate": {"match": "exact"}})
            self.next_id += 1
            self.facts[self.next_id] = fact(self.next_id, body["text"], body.get("type", "fact"), body.get("source", ""))
            return httpx.Response(201, json={"fact": self.facts[self.next_id], "created": True})
        if request.url.path == "/recall":
            self.requests.append(request)
            hits = [{"fact": f, "score": 0.5, "via": "both", "kw_rank": 1, "vec_rank": 1} for f in self.facts.values()]
            return httpx.Response(200, json={"results": hits, "kw": [], "vec": [], "mode": "hybrid",
                                             "fusion": {"method": "ratio", "kw_weight": 1.0, "vec_weight": 1.0}})
        return super().__call__(request)


# -- the owner's mistakes: 400/404, never "the memory service reported an error" ----------------

@pytest.fixture
def a_case(settings):
    from dashboard.models import EvalCase

    settings.MEMORY_URL = "http://memory.test"  # a case belongs to its service: the one mock_memory answers at
    return EvalCase.objects.create(suite="mine", question="Who is Priya?", expected_ids=[1])


@pytest.mark.parametrize("fusion,says", [
    ('{"k": 1e999}', "not a finite number"),
    ('{"k": NaN}', "not a number the memory can use"),
    ('{"k": Infinity}', "not a number the memory can use"),
    ("[" * 50_000 + "]" * 50_000, "longer than 2000 characters"),
    ('{"k": ' + "[" * 990 + "]" * 990 + "}", "must be a number"),
    ('{"k": {"a": 1}}', "must be a number, a word or true/false"),
])
def test_fusion_settings_that_are_not_numbers_are_the_owners_mistake(owner_client, mock_memory, a_case, fusion, says):
    fake = AddingMemory(fact(1, "Priya is the owner's sister."))
    mock_memory(fake)
    run = owner_client.post(reverse("evaluation"), {"fusion": fusion})  # running is a POST
    assert_owner_mistake(run, 400, says)
    compared = owner_client.get(reverse("evaluation_compare"), {"run": 1, "a": fusion, "b": "seed"})
    assert_owner_mistake(compared, 400, says)
    assert not [r for r in fake.requests if r.url.path == "/recall"]


@pytest.mark.parametrize("a,b", [(2**63, 1), (1, 2**64 + 5), ("x", 1), (-3, 1), (4, 4)])
def test_resolving_a_pair_with_impossible_ids_is_a_400(owner_client, mock_memory, a, b):
    from dashboard.models import DismissedPair

    fake = FakeMemory(fact(1, "a"))
    mock_memory(fake)
    for action in ("not_duplicate", "keep_a"):
        response = owner_client.post(reverse("duplicate_resolve"), {"a": a, "b": b, "action": action})
        assert_owner_mistake(response, 400, "A pair needs two different fact ids")
    assert not DismissedPair.objects.exists() and not [r for r in fake.requests if r.method != "GET"]


def test_a_bad_cursor_is_a_400_with_a_link_to_the_first_page(owner_client, mock_memory):
    def handler(request):
        if request.url.params.get("cursor"):
            return httpx.Response(400, json={"error": {"code": "invalid", "message": "cursor is not valid"}})
        return FakeMemory()(request)

    mock_memory(handler)
    response = owner_client.get(reverse("facts"), {"cursor": "garbage!!"})
    assert_owner_mistake(response, 400, "cursor is not valid")
    assert f'href="{reverse("facts")}"' in response.content.decode()


def test_a_pin_past_2_63_is_a_form_error_not_a_service_error(owner_client, mock_memory):
    fake = AddingMemory(fact(1, "Priya is the owner's sister."))
    mock_memory(fake)
    response = owner_client.get(reverse("recall"), {"q": "Priya", "pin": 2**63})
    assert_owner_mistake(response, 400, "less than or equal to")
    assert not [r for r in fake.requests if r.url.path in ("/recall", "/explain")]


@pytest.mark.parametrize("fact_id", [0, 2**53, 2**64])
def test_a_fact_id_outside_the_contracts_range_is_a_404_in_the_dashboards_words(owner_client, mock_memory, fact_id):
    fake = FakeMemory()
    mock_memory(fake)
    assert_owner_mistake(owner_client.get(f"/facts/{fact_id}/"), 404, "fact ids go from 1 to 9,007,199,254,740,991")
    assert not [r for r in fake.requests if r.url.path.startswith("/facts/")]  # the memory is not asked


def test_an_address_that_matches_no_page_says_so_in_words(owner_client):
    response = owner_client.get("/facts/-1/")
    html = response.content.decode()
    assert response.status_code == 404 and "Resolver404" not in html and "nothing at this address" in html


def test_a_deeply_nested_set_file_is_a_400(owner_client, mock_memory):
    fake = AddingMemory()
    mock_memory(fake)
    upload = io.BytesIO(b"[" * 100_000 + b"]" * 100_000)
    upload.name = "deep.json"
    assert_owner_mistake(owner_client.post(reverse("eval_import"), {"file": upload}), 400, "nested too deeply")
    assert not [r for r in fake.requests if r.method == "POST"]


@pytest.mark.parametrize("expected,status,says", [(55, 404, "no fact #55"), (2**63, 400, "a whole number from 1"),
                                                  ("x", 400, "a whole number from 1")])
def test_a_case_naming_a_fact_that_does_not_exist_is_the_owners_mistake(owner_client, mock_memory, expected, status, says):
    from dashboard.models import EvalCase

    mock_memory(FakeMemory(fact(1, "a")))
    response = owner_client.post(reverse("eval_case_add"), {"question": "Who?", "expected": expected})
    assert_owner_mistake(response, status, says)
    assert not EvalCase.objects.exists()


# -- importing a set: confirm first, all or nothing, audited ----------------------------------

SET = {"name": "tiny", "facts": [{"text": "Priya is the owner's sister."}, {"text": "Leo swims on Wednesdays."},
                                 {"text": "The cat is Pixel."}],
       "cases": [{"question": "Who is Priya?", "expected": ["Priya is the owner's sister."]}]}


def upload(data, name="tiny.json"):
    f = io.BytesIO(json.dumps(data).encode())
    f.name = name
    return f


def test_importing_a_set_asks_first_then_stores_and_audits_every_new_fact(owner_client, mock_memories):
    from dashboard.models import AuditEntry, EvalCase

    fake = AddingMemory(fact(1, "Leo swims on Wednesdays."))
    mock_memories({"default": FakeMemory(), "eval-tiny": fake})  # a set's facts go into its own memory
    asked = owner_client.post(reverse("eval_import"), {"file": upload(SET)})
    html = asked.content.decode()
    assert asked.status_code == 200 and "3 facts will be written into the memory" in html
    assert not [r for r in fake.requests if r.method == "POST"] and not EvalCase.objects.exists()

    done = owner_client.post(reverse("eval_import"), {"confirm": "yes"}, follow=True)
    assert "Imported set “tiny”: 1 case, 2 new facts stored in the memory “eval-tiny”." in done.content.decode()
    imported = AuditEntry.objects.filter(action="import")
    assert sorted(e.after["text"] for e in imported) == ["Priya is the owner's sister.", "The cat is Pixel."]
    assert all("tiny" in e.note for e in imported)
    assert EvalCase.objects.get(suite="tiny").expected_ids == [next(i for i, f in fake.facts.items() if f["text"].startswith("Priya"))]

    again = owner_client.post(reverse("eval_import"), {"confirm": "yes"})  # the session no longer holds it
    assert_owner_mistake(again, 400, "Nothing to import")


def test_an_over_long_fact_stops_the_import_before_anything_is_stored(owner_client, mock_memory):
    fake = AddingMemory()
    mock_memory(fake)
    data = {**SET, "facts": [*SET["facts"], {"text": "x" * 8001}]}
    response = owner_client.post(reverse("eval_import"), {"file": upload(data)})
    assert_owner_mistake(response, 400, "facts[3].text is 8001 characters")
    assert not [r for r in fake.requests if r.method == "POST"]


def test_a_fact_the_memory_refuses_midway_takes_back_the_ones_already_added(owner_client, mock_memories):
    from dashboard.models import AuditEntry, EvalCase

    fake = AddingMemory(refuse={"The cat is Pixel."})
    mock_memories({"default": FakeMemory(), "eval-tiny": fake})
    owner_client.post(reverse("eval_import"), {"file": upload(SET)})
    response = owner_client.post(reverse("eval_import"), {"confirm": "yes"})
    assert_owner_mistake(response, 400, "were deleted again, so nothing changed")
    assert fake.facts == {}  # the two stored before the refusal were deleted
    assert [r.method for r in fake.requests if r.method in ("POST", "DELETE")] == ["POST", "POST", "POST", "DELETE", "DELETE"]
    assert not AuditEntry.objects.exists() and not EvalCase.objects.exists()


# -- one deadline per request, one probe -------------------------------------------------------

class SlowService:
    """A memory service on loopback that answers /facts either never (hung) or one byte every `gap` s."""

    def __init__(self, mode: str, gap: float = 0.2):
        self.mode, self.gap, self.paths = mode, gap, []
        self.sock = socket.create_server(("127.0.0.1", 0))
        self.url = f"http://127.0.0.1:{self.sock.getsockname()[1]}"
        self.stop = threading.Event()
        self.server = threading.Thread(target=self.serve, daemon=True)
        self.server.start()

    def serve(self):
        self.sock.settimeout(0.1)
        while not self.stop.is_set():
            try:
                conn, _ = self.sock.accept()
            except TimeoutError:
                continue
            threading.Thread(target=self.answer, args=(conn,), daemon=True).start()

    def answer(self, conn):
        with conn:
            request = conn.recv(65536).decode(errors="replace")
            self.paths.append(request.split(" ")[1].split("?")[0] if " " in request else "?")
            body = json.dumps({"facts": [], "next_cursor": None, "total": 0}).encode() + b" " * 500
            if self.mode == "hung":
                self.stop.wait(30)
                return
            conn.sendall(b"HTTP/1.1 200 OK\r\nContent-Type: application/json\r\nContent-Length: %d\r\n\r\n" % len(body))
            for byte in body:  # a trickle: each read gets a byte well within the read timeout
                if self.stop.wait(self.gap):
                    return
                try:
                    conn.sendall(bytes([byte]))
                except OSError:
                    return

    def close(self):
        self.stop.set()
        self.server.join(5)  # it stops accepting before the socket goes
        self.sock.close()


@pytest.mark.parametrize("mode", ["hung", "trickle"])
def test_a_hung_or_trickling_service_holds_a_page_for_one_deadline_and_one_probe_at_most(owner_client, settings, mode):
    service = SlowService(mode)
    try:
        settings.MEMORY_URL, settings.MEMORY_TIMEOUT = service.url, 1.0
        started = time.monotonic()
        response = owner_client.get(reverse("facts"))
        took = time.monotonic() - started
    finally:
        service.close()
    assert response.status_code == 504 and "too slow" in response.content.decode()
    assert took < 1.6, took  # one MEMORY_TIMEOUT for the whole request (it was 2x, or 80-120 s for a trickle)
    assert service.paths == ["/facts"]  # no second wait on /health after the failure
    assert "too slow to answer" in response.content.decode()  # the strip says what the page says


def test_the_deadline_transport_really_is_the_one_httpx_uses():
    """DeadlineTransport swaps httpx's private pool: this fails if httpx stops using it."""
    from dashboard.memory import DeadlineTransport, _DeadlineBackend

    transport = DeadlineTransport()
    assert isinstance(transport._pool._network_backend, _DeadlineBackend)


# -- headers, favicon, CSP ---------------------------------------------------------------------

def test_private_pages_and_the_export_are_never_cached(owner_client, mock_memory):
    mock_memory(FakeMemory(fact(1, "a")))
    for url in (reverse("facts"), reverse("fact_detail", args=[1]), reverse("export"), reverse("trash"), reverse("audit")):
        response = owner_client.get(url)
        assert "no-store" in response["Cache-Control"], url
    assert "no-store" in Client().get(reverse("login"))["Cache-Control"]


def test_pages_link_a_favicon_that_is_served(owner_client, mock_memory):
    mock_memory(FakeMemory())
    html = owner_client.get(reverse("facts")).content.decode()
    assert 'rel="icon" href="/static/favicon.svg"' in html
    assert owner_client.get("/static/favicon.svg").status_code == 200


def test_htmx_is_told_not_to_inject_its_indicator_style(owner_client, mock_memory):
    mock_memory(FakeMemory())
    html = owner_client.get(reverse("facts")).content.decode()
    assert '"includeIndicatorStyles": false' in html and "style=" not in html


# -- stale and misleading bits -----------------------------------------------------------------

def test_an_htmx_add_updates_the_count_and_the_status_strip(owner_client, mock_memory):
    fake = AddingMemory(fact(1, "a"))
    mock_memory(fake)
    response = owner_client.post(reverse("fact_add"), {"text": "Leo swims.", "type": "fact"},
                                 headers={"HX-Request": "true", "HX-Current-URL": "http://testserver/"})
    html = response.content.decode()
    assert '<p class="count" id="fact-count" role="status" hx-swap-oob="true">2 facts</p>' in html
    assert 'id="service-status"' in html and "2 facts" in html.split('id="service-status"')[1]


def test_an_edit_conflict_is_said_once(owner_client, mock_memory):
    mock_memory(edit_conflict(fact(1, "Tom is tall."), fact(2, "Anna is short.")))
    for headers in ({"HX-Request": "true"}, {}):
        html = owner_client.post(reverse("fact_edit", args=[2]), {"text": "tom is tall.", "type": "fact"}, headers=headers).content.decode()
        alert = html.split('class="alert error"')[1].split("</div>")[0]
        assert alert.count("duplicate") == 1 and alert.count("Tom is tall.") == 1, alert


def test_a_deleted_facts_page_points_to_the_trash(owner_client, mock_memory):
    fake = FakeMemory(fact(55, "The cat is Pixel."))
    mock_memory(fake)
    owner_client.post(reverse("fact_delete", args=[55]))
    response = owner_client.get(reverse("fact_detail", args=[55]))
    html = response.content.decode()
    assert response.status_code == 404 and "Fact #55 was deleted" in html and f'href="{reverse("trash")}"' in html


def recall_answer(fusion: dict, kw: list) -> dict:
    f = fact(3, "Anna's sister is Lena.")
    return {"results": [{"fact": f, "score": 1.0, "via": "both", "kw_rank": 1, "vec_rank": 1}], "mode": "hybrid",
            "kw": kw, "vec": [{"fact": f, "rank": 1, "cosine": 0.7}], "match": "anna", "fusion": fusion}


def test_the_debugger_names_the_fusion_used_and_shows_only_real_keyword_matches(owner_client, mock_memory):
    real = {"fact": fact(3, "Anna's sister is Lena."), "rank": 1, "bm25": -2.1,
            "highlighted": "\x02Anna\x03'\x02s\x03 \x02sister\x03 is Lena."}
    padding = [{"fact": fact(10 + i, f"filler {i}"), "rank": 2 + i, "bm25": 0.0, "highlighted": f"filler {i}"} for i in range(29)]

    def handler(request):
        if request.url.path == "/recall":
            return httpx.Response(200, json=recall_answer({"method": "ratio", "kw_weight": 1, "vec_weight": 1}, [real, *padding]))
        return FakeMemory(fact(3, "Anna's sister is Lena."))(request)

    mock_memory(handler)
    html = owner_client.get(reverse("recall"), {"q": "Who is Anna's sister?"}).content.decode()
    fused_title = html.split('id="fused-title"')[1].split("</h2>")[0]
    assert "score ratio" in fused_title and "reciprocal" not in fused_title
    assert "filler" not in html  # BM25 0 padding is not a match
    assert "<mark>Anna</mark>&#x27;s <mark>sister</mark>" in html  # the possessive s is not a matched term


# -- evaluation cases: list, edit, delete, several answers, a history of runs ------------------

def test_cases_can_be_listed_edited_and_deleted(owner_client, mock_memory, a_case):
    from dashboard.models import EvalCase

    mock_memory(FakeMemory(fact(1, "Priya is the owner's sister."), fact(2, "Priya: the owner's sister.")))
    listed = owner_client.get(reverse("eval_cases")).content.decode()
    assert "Who is Priya?" in listed and reverse("eval_case_edit", args=[a_case.id]) in listed

    bad = owner_client.post(reverse("eval_case_edit", args=[a_case.id]), {"question": "Who is Priya?", "expected_ids": "1, 77"})
    assert_owner_mistake(bad, 400, "no fact #77")
    ok = owner_client.post(reverse("eval_case_edit", args=[a_case.id]), {"question": "Who is Priya, really?", "expected_ids": "2, 1"})
    assert ok.status_code == 302
    a_case.refresh_from_db()
    assert (a_case.question, a_case.expected_ids) == ("Who is Priya, really?", [1, 2])

    owner_client.post(reverse("eval_case_delete", args=[a_case.id]))
    assert not EvalCase.objects.exists()


def test_expected_from_the_debugger_adds_an_accepted_answer(owner_client, mock_memory, a_case):
    mock_memory(FakeMemory(fact(1, "a"), fact(2, "b")))
    owner_client.post(reverse("eval_case_add"), {"question": "Who is Priya?", "expected": 2})
    a_case.refresh_from_db()
    assert a_case.expected_ids == [1, 2]


def test_runs_are_kept_and_show_what_changed(owner_client, mock_memory):
    from dashboard.models import EvalCase, EvalRun

    fake = AddingMemory(fact(1, "Priya is the owner's sister."), fact(2, "Leo swims."))
    mock_memory(fake)
    EvalCase.objects.create(suite="mine", question="Who is Priya?", expected_ids=[1])
    owner_client.post(reverse("evaluation"))
    EvalCase.objects.create(suite="mine", question="Who swims?", expected_ids=[2])
    html = owner_client.post(reverse("evaluation")).content.decode()
    assert EvalRun.objects.count() == 2
    history = html.split('id="run-history"')[1]
    assert "first run" in history and "hit@1 " in history


# -- the near-duplicate page ---------------------------------------------------------------------

def duplicates_handler(nearest: list[float], pairs=()):
    fake = FakeMemory(fact(1, "a"), fact(2, "b"))

    def handler(request):
        if request.url.path == "/duplicates/nearest":
            return httpx.Response(200, json={"nearest": [{"id": i, "score": s} for i, s in enumerate(nearest)]})
        if request.url.path == "/duplicates":
            return httpx.Response(200, json={"pairs": list(pairs), "total": len(pairs)})
        return fake(request)

    return handler


def test_the_histogram_is_honest(owner_client, mock_memory):
    from dashboard.diff import chart, histogram

    bins = histogram([0.1, 0.2, 0.97, 1.0])
    # The slider's scale, 0.5 to 1.0: scores under it are left out (the caption counts them), not piled into the first bar.
    assert bins[0]["low"] == 0.5 and sum(b["count"] for b in bins) == 2 and bins[0]["count"] == 0
    c = chart(bins, 0.97)
    last = c["ticks"][-1]
    assert (last["label"], last["x"], last["anchor"]) == ("1.0", c["width"], "end")  # 1.0 where 1.0 is
    assert sum(b["count"] for b in c["bars"] if b["caught"]) == 2  # the bars at or above the line hold 0.97 and 1.0

    mock_memory(duplicates_handler([0.1, 0.2, 0.97, 1.0]))
    html = owner_client.get(reverse("duplicates"), {"threshold": "0.97"}).content.decode()
    assert "2 of 2 facts" in html and "2 facts with a nearest neighbour under 0.50 are left of the chart" in html


def test_the_histogram_says_which_facts_a_review_floor_leaves_out(owner_client, mock_memory):
    def handler(request):
        if request.url.path == "/duplicates/nearest":
            return httpx.Response(200, json={"nearest": [{"id": 1, "score": 0.85}, {"id": 2, "score": 0.98}], "floor": 0.8})
        return duplicates_handler([])(request)

    mock_memory(handler)
    html = owner_client.get(reverse("duplicates"), {"threshold": "0.97"}).content.decode()
    assert "1 of 2 facts" in html and "review floor, 0.80; the others are not drawn" in html


def test_the_threshold_is_a_slider_that_updates_the_pairs_via_htmx(owner_client, mock_memory):
    mock_memory(duplicates_handler([0.5, 0.9]))
    html = owner_client.get(reverse("duplicates")).content.decode()
    assert 'type="range" id="id_threshold" name="threshold"' in html and "delay:" in html and 'hx-target="#dup-results"' in html
    partial = owner_client.get(reverse("duplicates"), {"threshold": "0.9"}, headers={"HX-Request": "true"}).content.decode()
    assert partial.startswith('\n<div id="dup-results">') or partial.lstrip().startswith('<div id="dup-results">')
    assert "<html" not in partial


def test_not_a_duplicate_can_be_undone(owner_client, mock_memory):
    from dashboard.models import DismissedPair

    pair = {"a": fact(1, "a"), "b": fact(2, "b"), "score": 0.99}
    mock_memory(duplicates_handler([0.99, 0.99], [pair]))
    owner_client.post(reverse("duplicate_resolve"), {"a": 1, "b": 2, "action": "not_duplicate"})
    page = owner_client.get(reverse("duplicates")).content.decode()
    assert 'id="pair-1-2"' not in page and 'id="dismissed-1-2"' in page
    owner_client.post(reverse("duplicate_resolve"), {"a": 1, "b": 2, "action": "undo_not_duplicate"})
    assert not DismissedPair.objects.exists()
    assert 'id="pair-1-2"' in owner_client.get(reverse("duplicates")).content.decode()


