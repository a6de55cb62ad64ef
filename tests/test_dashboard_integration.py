"""The dashboard against both memories on loopback, the local service and the Worker's Durable
Object: real HTTP, real model."""

import re

import pytest
from django.urls import reverse

from dashboard.models import DismissedPair

pytestmark = pytest.mark.django_db


@pytest.fixture(scope="module")
def service(either_service):
    """live_memory points the dashboard at this: each test runs against both memories."""
    return either_service


def add(client, text, type="fact", source="test"):
    return client.post(reverse("fact_add"), {"text": text, "type": type, "source": source}, headers={"HX-Request": "true"})


def fact_id(html: str) -> int:
    return int(re.search(r"fact #(\d+)", html).group(1))


def test_add_then_see_it_listed_and_a_duplicate_flagged(owner_client, live_memory):
    r = add(owner_client, "Priya is the owner's sister.")
    assert r.status_code == 200 and "Added" in r.content.decode()
    fid = fact_id(r.content.decode())
    assert f'id="fact-{fid}"' in r.content.decode()  # the new row is swapped into the list

    again = add(owner_client, "priya is the OWNER's sister.").content.decode()
    assert "Already in memory" in again and f"fact #{fid}" in again and "exact match" in again
    near = add(owner_client, "Priya is the sister of the owner.").content.decode()
    assert "Already in memory" in near and "near match, cosine 0.9" in near

    listing = owner_client.get(reverse("facts"), {"q": "Priya"}).content.decode()
    assert listing.count('<td class="text">Priya is the owner&#x27;s sister.</td>') == 1


def test_inline_edit_re_embeds_and_shows_a_conflict(owner_client, live_memory):
    a = fact_id(add(owner_client, "Tomas lives in Berlin.").content.decode())
    b = fact_id(add(owner_client, "Ines lives in Porto.").content.decode())
    form = owner_client.get(reverse("fact_edit", args=[b]), headers={"HX-Request": "true"}).content.decode()
    assert "<textarea" in form and "Ines lives in Porto." in form

    saved = owner_client.post(reverse("fact_edit", args=[b]), {"text": "Ines lives in Madrid.", "type": "fact", "source": "x"},
                              headers={"HX-Request": "true"})
    assert saved.status_code == 200 and "Ines lives in Madrid." in saved.content.decode()
    with live_memory.client() as api:
        kw = api.post("/recall", json={"query": "Madrid", "debug": True}).json()["kw"]
        assert kw[0]["fact"]["id"] == b

    clash = owner_client.post(reverse("fact_edit", args=[b]), {"text": "tomas lives in berlin.", "type": "fact", "source": ""},
                              headers={"HX-Request": "true"})
    assert clash.status_code == 409 and f"duplicate fact #{a}" in clash.content.decode()


def test_delete_removes_the_fact_from_the_list_keyword_and_vector_recall(owner_client, live_memory):
    fid = fact_id(add(owner_client, "The owner's cat is called Pixel.").content.decode())
    confirm = owner_client.get(reverse("fact_delete", args=[fid])).content.decode()
    assert "Delete fact #%d" % fid in confirm
    assert owner_client.post(reverse("fact_delete", args=[fid])).status_code == 302

    assert f'id="fact-{fid}"' not in owner_client.get(reverse("facts")).content.decode()
    with live_memory.client() as api:
        result = api.post("/recall", json={"query": "cat called Pixel", "debug": True, "limit": 100}).json()
    assert fid not in {h["fact"]["id"] for h in result["kw"]}
    assert fid not in {h["fact"]["id"] for h in result["vec"]}
    debugger = owner_client.get(reverse("recall"), {"q": "cat called Pixel"}).content.decode()
    assert f'data-fact-id="{fid}"' not in debugger


def test_bulk_delete_confirms_then_deletes(owner_client, live_memory):
    ids = [fact_id(add(owner_client, t).content.decode()) for t in ("Bulk one: apples are red.", "Bulk two: the sky is blue.")]
    confirm = owner_client.post(reverse("fact_bulk_delete"), {"ids": ids}).content.decode()
    assert "Delete 2 facts" in confirm
    owner_client.post(reverse("fact_bulk_delete"), {"ids": ids, "confirm": "yes"})
    for i in ids:
        assert owner_client.get(reverse("fact_detail", args=[i])).status_code == 404


def test_near_duplicates_resolve_and_not_a_duplicate_is_remembered(owner_client, live_memory):
    a = fact_id(add(owner_client, "The owner's passport expires in 2028.").content.decode())
    b = fact_id(add(owner_client, "The owner's passport now expires in 2030.").content.decode())
    # b's write proposed that it replaces a: while that is open, the pair is the Contradictions page's.
    assert f'id="pair-{a}-{b}"' not in owner_client.get(reverse("duplicates"), {"threshold": "0.85"}).content.decode()
    owner_client.post(reverse("contradiction_resolve"), {"old": a, "new": b, "resolution": "keep_both"})  # both true
    page = owner_client.get(reverse("duplicates"), {"threshold": "0.85"}).content.decode()
    assert f'id="pair-{a}-{b}"' in page and "<mark>" in page and "<svg" in page

    owner_client.post(reverse("duplicate_resolve"), {"a": a, "b": b, "action": "not_duplicate", "next": "threshold=0.85"})
    assert DismissedPair.objects.filter(low_id=min(a, b), high_id=max(a, b)).exists()
    page = owner_client.get(reverse("duplicates"), {"threshold": "0.85"}).content.decode()
    assert f'id="pair-{a}-{b}"' not in page and "marked “not a duplicate” hidden" in page

    c = fact_id(add(owner_client, "Leo's school is the Montessori on Kanaalweg.").content.decode())
    d = fact_id(add(owner_client, "Leo goes to the Montessori school on Kanaalweg.").content.decode())
    owner_client.post(reverse("duplicate_resolve"), {"a": c, "b": d, "action": "keep_b"})
    assert owner_client.get(reverse("fact_detail", args=[c])).status_code == 404
    assert owner_client.get(reverse("fact_detail", args=[d])).status_code == 200


def test_merge_saves_the_new_text_on_one_and_deletes_the_other(owner_client, live_memory):
    a = fact_id(add(owner_client, "Mara's birthday is in September.").content.decode())
    b = fact_id(add(owner_client, "Mara was born on 2 September.").content.decode())
    owner_client.post(reverse("duplicate_resolve"),
                      {"a": a, "b": b, "action": "merge", "keep": "a", "text": "Mara's birthday is on 2 September."})
    assert owner_client.get(reverse("fact_detail", args=[b])).status_code == 404
    assert "Mara&#x27;s birthday is on 2 September." in owner_client.get(reverse("fact_detail", args=[a])).content.decode()


def test_the_recall_debugger_shows_three_columns_and_a_pinned_fact(owner_client, live_memory):
    sister = fact_id(add(owner_client, "Anna's sister is Lena.").content.decode())
    add(owner_client, "Tom's brother is Anna.")
    page = owner_client.get(reverse("recall"), {"q": "Who is Anna's sister?", "pin": sister})
    html = page.content.decode()
    assert page.status_code == 200
    assert all(f'id="{c}-title"' in html for c in ("kw", "vec", "fused"))
    assert html.count(f'data-fact-id="{sister}"') >= 4  # pin report + three columns
    assert 'class="pinned"' in html and "<mark>Anna</mark>" in html
    pin = re.search(r'id="pin-kw">([^<]*)<', html).group(1)
    assert pin.startswith("rank 1")  # a rank, not a fact id


def test_the_debugger_says_how_much_a_keyword_match_is_worth(owner_client, live_memory):
    for text in ("The owner's GP is Dr. Hale.", "The owner's sister is Priya.", "The owner's car is a green Skoda.",
                 "The owner's bank is Triodos.", "Rain is forecast for Friday."):
        add(owner_client, text)
    bank = fact_id(owner_client.get(reverse("facts"), {"q": "Triodos"}).content.decode())
    html = owner_client.get(reverse("recall"), {"q": "which doctor does the owner see", "pin": bank}).content.decode()
    assert "what a fact matching every query term once scores" in html
    weight = {t: float(w) for t, w in re.findall(r'<code class="term">(\w+)</code> in \d+ facts?, weight (\d+\.\d+)', html)}
    assert weight["owner"] < weight["doctor"]  # more facts say "owner" than "doctor" in this memory
    info = re.search(r'id="pin-info">([^<]*)<', html).group(1)
    assert info.startswith("BM25 ") and "words many facts contain add almost nothing" in info

def test_the_debugger_shows_the_expansion_and_the_rerank(owner_client, live_memory):
    for text in ("Cosima Jaramillo works as a glazier.", "Cosima Jaramillo is Freya Jaramillo's sister.",
                 "Cosima Jaramillo is married to Tobias Varga."):
        add(owner_client, text)
    married = fact_id(owner_client.get(reverse("facts"), {"q": "Tobias"}).content.decode())
    html = owner_client.get(reverse("recall"), {"q": "who is cosima jaramillo's spouse", "pin": married}).content.decode()
    assert re.search(r'<code>spouse</code> → <code class="term">married</code>', html)  # expansion, from the client
    rerank = re.search(r'<span id="rerank">(.*?)</span>', html, re.S).group(1)
    assert '<code class="term">cosima</code>, <code class="term">jaramillo</code>' in rerank
    assert "· rerank +" in html and re.search(r'id="pin-rerank">[^<]*adds 0\.\d+', html)


def test_a_pinned_fact_outside_the_lists_says_so_with_its_cosine(owner_client, live_memory):
    far = fact_id(add(owner_client, "The boiler was serviced in March.").content.decode())
    html = owner_client.get(reverse("recall"), {"q": "Anna sister", "pin": far, "type": "skill"}).content.decode()
    assert "not matched" in re.search(r'id="pin-kw">([^<]*)<', html).group(1)
    assert "cosine" in re.search(r'id="pin-vec">([^<]*)<', html).group(1)


def test_fact_detail_lists_neighbours(owner_client, live_memory):
    a = fact_id(add(owner_client, "The owner runs 10 km on Saturdays.").content.decode())
    add(owner_client, "The owner goes running every Saturday morning.")
    html = owner_client.get(reverse("fact_detail", args=[a])).content.decode()
    assert "Nearest neighbours" in html and "running every Saturday" in html


def test_the_dashboard_recovers_when_the_service_comes_back(owner_client, settings, tmp_path):
    from tests.memory_service import Service

    service = Service(tmp_path / "m.db")
    settings.MEMORY_URL, settings.MEMORY_SECRET = service.url, service.secret
    assert owner_client.get(reverse("facts")).status_code == 503
    service.start()
    try:
        response = owner_client.get(reverse("facts"))
        assert response.status_code == 200 and "reachable" in response.content.decode()
    finally:
        service.stop()


@pytest.mark.parametrize("q,says", [('"', "no word to search for"), ("*", "no word to search for"),
                                    ("🙂", "no word to search for"), ("the of a", "every word is a stop word")])
def test_an_empty_keyword_query_says_why(owner_client, live_memory, q, says):
    html = owner_client.get(reverse("recall"), {"q": q}).content.decode()
    match = html.split('class="match"')[1].split("</p>")[0]
    assert says in match, match


def test_the_rerank_can_be_turned_off_from_the_debugger_in_one_click(owner_client, live_memory):
    with live_memory.client() as api:
        api.post("/facts", json={"text": "Anna's sister is Lena."})
        api.post("/facts", json={"text": "Anna's brother is Tom."})
        api.put("/settings", json={"fusion": {"expand": 0.7}})
    try:
        html = owner_client.get(reverse("recall"), {"q": "Who is Anna's sister?"}).content.decode()
        form = html.split('id="rerank-off"')[1].split("</form>")[0]
        fusion = re.search(r'name="fusion" value="([^"]*)"', form).group(1).replace("&quot;", '"')
        name = re.search(r'name="memory" value="([^"]*)"', form).group(1)  # the memory the page is about
        done = owner_client.post(reverse("settings_adopt"), {"memory": name, "fusion": fusion})
        assert done.status_code == 302
        with live_memory.client() as api:
            kept = api.get("/settings").json()["fusion"]
        assert kept["rerank"] == 0 and kept["expand"] == 0.7  # the memory's other settings stay
        assert 'id="rerank-off"' not in owner_client.get(reverse("recall"), {"q": "Who is Anna's sister?"}).content.decode()
    finally:
        with live_memory.client() as api:
            api.put("/settings", json={"fusion": {"preset": "default"}})
