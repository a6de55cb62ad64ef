"""The recall debugger's why (issue 32 §4) against both memories over real HTTP with the real
model: "Where is fact #N?" lists the facts recall put above it, by how much more each scored in
each part (keyword, vector, rerank) and the part it gained most by, "expansion" when its keyword
part came only from a word the query was widened with; and the open contradictions between two
of the shown facts are marked, linked to the Contradictions queue. Then a memory that keeps no
queue, on httpx.MockTransport."""

from __future__ import annotations

import httpx
import pytest
from django.urls import reverse

from tests.fake_memory import FakeMemory, fact
from tests.html import page

pytestmark = pytest.mark.django_db

Q = "how old is my son"
# The son's age twice (the second's write proposes it replaces the first, and recall answers it
# above the first until the owner decides), and facts around them:
# "kid" is what the memory widens "son" with, so the school fact matches by keyword through it alone.
FACTS = ["The owner's son is seven years old.", "The owner's son is called Leo.", "The owner's daughter is twelve.",
         "Leo plays football on Saturdays.", "The owner's son is eight years old.", "The owner's dog is a beagle.",
         "The owner's kid goes to school in Utrecht.", "The owner's child is allergic to peanuts."]


@pytest.fixture(scope="module")
def service(either_service):
    """live_memory points the dashboard at this: each test runs against both memories."""
    return either_service


@pytest.fixture(scope="module")
def ids(service) -> dict[str, int]:
    with service.client() as api:
        return {t: api.post("/facts", json={"text": t}).json()["fact"]["id"] for t in FACTS}


def fused_ids(html) -> list[int]:
    return [int(li["data-fact-id"]) for li in html.select("#fused-title ~ ol.ranked > li[data-fact-id]")]


def outranked(html) -> list[dict]:
    """Each row of "What outranked it": the fact, the part it won by, and the numbers."""
    rows = []
    for tr in html.select("table.outranked tbody tr"):
        cells = tr.select("td")
        number = [float(c.get_text().split()[0]) for c in cells[2:-1]]
        rows.append({"id": int(tr["data-fact-id"]), "by": tr["data-by"], "rank": int(cells[0].get_text()),
                     "total": number[0], "parts": number[1:], "via": [c.get_text() for c in tr.select(".via code")],
                     "conflict": tr.select_one("a.badge.conflict")})
    return rows


def test_the_facts_above_a_pinned_fact_each_say_the_part_they_beat_it_by(owner_client, live_memory, ids):
    daughter, kid, seven = ids[FACTS[2]], ids[FACTS[6]], ids[FACTS[0]]
    html = page(owner_client.get(reverse("recall"), {"q": Q, "pin": daughter}))
    order = fused_ids(html)
    rows = outranked(html)
    assert [r["id"] for r in rows] == order[: order.index(daughter)]  # every fact above it, in order
    assert [r["rank"] for r in rows] == list(range(1, len(rows) + 1))
    for r in rows:  # the parts add up to the lead, each lead is a lead
        assert r["total"] > 0 and abs(sum(r["parts"]) - r["total"]) < 5e-5, r
    by = {r["id"]: r for r in rows}
    assert by[kid]["by"] == "expansion" and by[kid]["via"] == ["kid"]  # its only keyword match is the widened word
    assert by[seven]["by"] != "expansion" and by[seven]["via"] == []  # "son" and "old" are the query's own
    assert html.select_one("#outranked .hint").get_text().startswith(f"The {len(rows)} facts above it")


def test_a_newer_answer_placed_above_the_older_is_told_so_and_the_open_contradiction_is_marked(owner_client, live_memory, ids):
    seven, eight = ids[FACTS[0]], ids[FACTS[4]]
    html = page(owner_client.get(reverse("recall"), {"q": Q, "pin": seven}))
    order = fused_ids(html)
    assert order.index(eight) == order.index(seven) - 1  # the newer answer just above the older
    rows = outranked(html)
    assert rows[-1]["id"] == eight and rows[-1]["by"] == "newer"  # whatever the scores: the open proposal put it there
    assert "Newer answer" in html.select_one("#outranked").get_text()
    link = rows[-1]["conflict"]
    assert link["href"] == f"{reverse('contradictions')}#conflict-{seven}-{eight}" and f"#{seven}" in link.get_text()
    older = html.select_one(f'#fused-title ~ ol.ranked > li[data-fact-id="{seven}"] .flag-outdated')
    assert older is not None and older.get_text() == "may be outdated"
    assert html.select_one(f'#fused-title ~ ol.ranked > li[data-fact-id="{eight}"] .flag-outdated') is None

    # The pair is marked among the results too, both rows linked to its place in the queue.
    pair = html.select_one(f'#recall-conflicts li[data-old="{seven}"][data-new="{eight}"]')
    assert pair is not None and "differ in a number" in pair.get_text()
    assert [m.get_text() for m in pair.select("mark")] == ["eight", "seven"]
    for fid, other in ((seven, eight), (eight, seven)):
        link = html.select_one(f'#fused-title ~ ol.ranked > li[data-fact-id="{fid}"] .badge.conflict a[href$="#conflict-{seven}-{eight}"]')
        assert link is not None and link.get_text() == f"#{other}"
    queue = page(owner_client.get(reverse("contradictions")))
    assert queue.select_one(f"#conflict-{seven}-{eight}") is not None  # the link lands on the pair


def test_a_pair_decided_both_true_is_no_longer_marked(owner_client, live_memory):
    with live_memory.client() as api:
        old = api.post("/facts", json={"text": "The owner's bike lock code is 4417."}).json()
        new = api.post("/facts", json={"text": "The owner's bike lock code is 4471."}).json()
    assert old["fact"]["id"] in [c["id"] for c in new["conflicts"]]
    a, b = old["fact"]["id"], new["fact"]["id"]
    html = page(owner_client.get(reverse("recall"), {"q": "bike lock code"}))
    assert html.select_one(f'#recall-conflicts li[data-old="{a}"][data-new="{b}"]') is not None
    owner_client.post(reverse("contradiction_resolve"), {"old": a, "new": b, "resolution": "keep_both"})
    html = page(owner_client.get(reverse("recall"), {"q": "bike lock code", "pin": a}))
    assert html.select_one(f'#recall-conflicts li[data-old="{a}"][data-new="{b}"]') is None
    assert not html.select(f'li[data-fact-id="{a}"] .badge.conflict a[href$="#conflict-{a}-{b}"]')
    assert all(r["conflict"] is None for r in outranked(html))


def test_a_fact_below_the_limit_lists_the_shown_facts_and_counts_the_rest(owner_client, live_memory, ids):
    daughter = ids[FACTS[2]]
    full = page(owner_client.get(reverse("recall"), {"q": Q}))
    rank = fused_ids(full).index(daughter) + 1
    assert rank > 3
    html = page(owner_client.get(reverse("recall"), {"q": Q, "pin": daughter, "limit": 2}))
    assert [r["id"] for r in outranked(html)] == fused_ids(full)[:2]
    assert html.select_one("#outranked .hint").get_text().startswith(f"The 2 shown, and {rank - 3} more between them and it")


def test_the_first_fact_is_outranked_by_nothing(owner_client, live_memory, ids):
    first = fused_ids(page(owner_client.get(reverse("recall"), {"q": Q})))[0]
    html = page(owner_client.get(reverse("recall"), {"q": Q, "pin": first}))
    assert html.select_one("#outranked").get_text(" ", strip=True) == "What outranked it Nothing: it comes first."


def test_a_memory_that_keeps_no_queue_still_explains(owner_client, mock_memory):
    """A memory of contract v3 answers GET /conflicts with 404: nothing is marked, the rest works."""
    a, b = fact(1, "Priya is the owner's sister."), fact(2, "Priya is the owner's cousin.")

    def hit(f, rank, kw, vec):
        return {"fact": f, "score": kw + vec, "via": "both", "kw_rank": rank, "vec_rank": rank,
                "parts": {"kw": kw, "vec": vec, "rerank": 0.0}}

    def handler(request):
        if request.url.path == "/recall":
            return httpx.Response(200, json={
                "results": [hit(b, 1, 0.5, 0.9), hit(a, 2, 0.5, 0.8)], "mode": "hybrid", "match": '"priya"',
                "kw": [{"fact": f, "rank": i, "bm25": -1.0, "highlighted": "\x02Priya\x03 is"} for i, f in ((1, b), (2, a))],
                "vec": [], "fusion": {"method": "info", "depth": 30}})
        if request.url.path == "/explain":
            return httpx.Response(200, json={"fact": a, "kw_rank": 2, "vec_rank": 2, "kw_contribution": 0.5,
                                             "vec_contribution": 0.8, "rerank_contribution": 0.0, "score": 1.3,
                                             "fused_rank": 2, "depth": 30, "query_terms": ["priya"], "fact_terms": []})
        if request.url.path == "/conflicts":
            return httpx.Response(404, json={"error": {"code": "not_found", "message": "no route"}})
        return FakeMemory(a, b)(request)

    mock_memory(handler)
    html = page(owner_client.get(reverse("recall"), {"q": "Who is Priya?", "pin": 1}))
    assert html.select_one("#recall-conflicts") is None
    [row] = outranked(html)
    assert row["id"] == 2 and row["by"] == "vec" and row["parts"] == [0.0, 0.1]


def test_a_query_word_in_another_form_is_the_querys_own_not_the_expansions():
    """"What outranked it" called "+1.17 via lives" the expansion's, while the keyword index stems
    "lives" and the query's own "live" to one word (issue 51 §5)."""
    from dashboard.views.recall import by_expansion, inflected

    assert not by_expansion("lives", ["where", "owner", "live"], ["lives", "home"])
    assert not by_expansion("living", ["live"], ["lives"])
    assert by_expansion("home", ["where", "owner", "live"], ["lives", "home"])
    assert by_expansion("married", ["wife"], ["married", "spouse"])
    assert {inflected(w) for w in ("live", "lives", "lived", "living")} == {"liv"}
    assert inflected("bus") == "bus" and inflected("is") == "is"
