"""Views against a memory on httpx.MockTransport: what the owner sees when the service misbehaves."""

import json
from datetime import UTC, datetime

import httpx
import pytest
from django.template import Context, Template
from django.urls import reverse, set_script_prefix
from django.utils import timezone

from tests.fake_memory import FakeMemory, edit_conflict, fact

pytestmark = pytest.mark.django_db

PAGES = [("facts", {}), ("duplicates", {}), ("recall", {"q": "Priya"}), ("fact_detail", {"fact_id": 1})]


def url(name, args):
    return reverse(name, kwargs=args) if "fact_id" in args else reverse(name) + ("?q=Priya" if args else "")


@pytest.mark.parametrize("name,args", PAGES)
@pytest.mark.parametrize("failure,status,says", [
    (httpx.ConnectError("refused"), 503, "not reachable"),
    (httpx.ReadTimeout("slow"), 504, "too slow"),
])
def test_a_down_or_slow_service_gets_a_plain_page(owner_client, mock_memory, name, args, failure, status, says):
    def handler(request):
        raise failure

    mock_memory(handler)
    response = owner_client.get(url(name, args))
    assert response.status_code == status
    html = response.content.decode()
    assert says in html and "http://memory.test" in html
    assert "Traceback" not in html and "mock-secret" not in html


@pytest.mark.parametrize("name,args", PAGES)
@pytest.mark.parametrize("answer,says", [
    (httpx.Response(200, text="<html>a captive portal</html>"), "answered something unexpected"),
    (httpx.Response(401, json={"error": {"code": "unauthorized", "message": "wrong"}}), "refused the dashboard"),
    (httpx.Response(500, text="boom"), "reported an error"),
])
def test_a_service_answering_garbage_gets_a_plain_page(owner_client, mock_memory, name, args, answer, says):
    mock_memory(lambda request: answer)
    response = owner_client.get(url(name, args))
    assert response.status_code == 502
    assert says in response.content.decode()


def test_an_htmx_request_gets_the_problem_beside_what_it_swaps_and_the_strip_turns_red(owner_client, mock_memory):
    def handler(request):
        raise httpx.ConnectError("refused")

    mock_memory(handler)
    response = owner_client.get(reverse("facts"), {"q": "x"}, headers={"HX-Request": "true", "HX-Target": "fact-list"})
    assert response.status_code == 503
    assert (response["HX-Retarget"], response["HX-Reswap"]) == ("#fact-list", "beforebegin")
    html = response.content.decode()
    assert "<html" not in html and "not reachable" in html
    assert 'id="service-status"' in html and 'hx-swap-oob="true"' in html and "status down" in html


def test_an_htmx_request_without_a_target_gets_the_problem_in_the_alerts_area(owner_client, mock_memory):
    def handler(request):
        raise httpx.ConnectError("refused")

    mock_memory(handler)
    response = owner_client.get(reverse("facts"), {"q": "x"}, headers={"HX-Request": "true"})
    assert response.status_code == 503 and response["HX-Retarget"] == "#alerts"


def test_the_status_banner_shows_url_count_and_model_not_the_secret(owner_client, mock_memory):
    mock_memory(FakeMemory(fact(1, "Priya is the owner's sister.")))
    html = owner_client.get(reverse("facts")).content.decode()
    assert "http://memory.test" in html and "1 fact" in html and "model fake" in html and "no orphans" in html
    assert "mock-secret" not in html


def test_the_list_shows_each_fact_with_its_metadata(owner_client, mock_memory):
    mock_memory(FakeMemory(fact(1, "Priya is the owner's sister.", source="chat"), fact(2, "Use the train.", "skill", "owner")))
    response = owner_client.get(reverse("facts"))
    html = response.content.decode()
    assert "2 facts" in html and 'id="fact-2"' in html and "Use the train." in html
    assert html.index('id="fact-2"') < html.index('id="fact-1"')  # newest first


def test_an_empty_memory_offers_no_delete_selected(owner_client, mock_memory):
    mock_memory(FakeMemory())
    assert "Delete selected" not in owner_client.get(reverse("facts")).content.decode()
    mock_memory(FakeMemory(fact(1, "Use the train.")))
    assert "Delete selected" in owner_client.get(reverse("facts")).content.decode()


def test_live_search_returns_only_the_list_partial(owner_client, mock_memory):
    mock_memory(FakeMemory(fact(1, "Priya is the owner's sister."), fact(2, "Use the train.")))
    response = owner_client.get(reverse("facts"), {"q": "train"}, headers={"HX-Request": "true", "HX-Target": "fact-list"})
    html = response.content.decode()
    assert "<html" not in html and 'id="fact-list"' in html
    assert "1 fact matching “train”" in html and "Priya" not in html


def test_an_unknown_fact_is_a_404_page(owner_client, mock_memory):
    mock_memory(FakeMemory())
    assert owner_client.get(reverse("fact_detail", args=[99])).status_code == 404


def test_adding_empty_text_is_refused_without_calling_the_service(owner_client, mock_memory):
    fake = FakeMemory()
    mock_memory(fake)
    response = owner_client.post(reverse("fact_add"), {"text": "   ", "type": "fact"}, headers={"HX-Request": "true"})
    assert response.status_code == 422 and "This field is required" in response.content.decode()
    assert not [r for r in fake.requests if r.method == "POST"]


def test_an_edit_conflict_is_shown_with_a_link(owner_client, mock_memory):
    mock_memory(edit_conflict(fact(1, "Tom is tall."), fact(2, "Anna is short.")))
    response = owner_client.post(reverse("fact_edit", args=[2]), {"text": "tom is tall.", "type": "fact"},
                                 headers={"HX-Request": "true"})
    html = response.content.decode()
    assert response.status_code == 409
    assert "This would duplicate fact #1" in html and reverse("fact_detail", args=[1]) in html
    assert "<tr" in html and "<html" not in html


def test_the_recall_debugger_keeps_the_query_in_the_url_and_computes_contributions(owner_client, mock_memory):
    f = fact(3, "Priya is the owner's sister.")

    def handler(request):
        if request.url.path == "/recall":
            assert json.loads(request.content)["debug"] is True
            return httpx.Response(200, json={
                "results": [{"fact": f, "score": 1 / 61 + 1 / 62, "via": "both", "kw_rank": 1, "vec_rank": 2}],
                "mode": "hybrid", "kw": [{"fact": f, "rank": 1, "bm25": -1.5, "highlighted": "\x02Priya\x03 is the owner's sister."}],
                "vec": [{"fact": f, "rank": 2, "cosine": 0.71}], "match": '"priya"',
                "fusion": {"k": 60, "depth": 30, "kw_weight": 1.0, "vec_weight": 1.0},
            })
        return FakeMemory(f)(request)

    mock_memory(handler)
    response = owner_client.get(reverse("recall"), {"q": "<b>Who</b> is Priya?"})
    html = response.content.decode()
    assert "<mark>Priya</mark>" in html and "<b>Who</b>" not in html  # matched terms marked, user text escaped
    assert "+0.01639" in html and "+0.01613" in html  # 1/61 and 1/62
    assert 'class="badge via-both"' in html and "&quot;priya&quot;" in html


def test_a_memory_with_only_the_base_contract_still_works(owner_client, mock_memory):
    """The local service's extra routes (neighbours, nearest) may be missing elsewhere."""
    fake = FakeMemory(fact(1, "Priya is the owner's sister."))

    def handler(request):
        if request.url.path.endswith("/neighbours") or request.url.path == "/duplicates/nearest":
            return httpx.Response(404, json={"error": {"code": "not_found", "message": "no route"}})
        return fake(request)

    mock_memory(handler)
    detail = owner_client.get(reverse("fact_detail", args=[1]))
    assert detail.status_code == 200 and "does not list neighbours" in detail.content.decode()
    dups = owner_client.get(reverse("duplicates"))
    assert dups.status_code == 200 and "<svg" not in dups.content.decode()


@pytest.mark.parametrize("zone", ["UTC", "America/New_York", "Asia/Kolkata"])
def test_the_facts_rows_cheap_dates_and_links_say_what_the_django_ones_say(rf, settings, zone):
    settings.TIME_ZONE = zone
    both = Template("{% load desk %}{{ t|iso }} {{ t|minute }} {% fact_url 'fact_edit' 7 %} {% fact_url 'fact_edit' 42 %}"
                    "|{{ t|date:'c' }} {{ t|date:'Y-m-d H:i' }} {% url 'fact_edit' 7 %} {% url 'fact_edit' 42 %}")
    set_script_prefix("/m/987654321/")  # the memory switch's prefix, holding the stand-in's digits
    try:
        with timezone.override(zone):
            for t in (datetime(2026, 3, 29, 0, 30, 5, 123456, tzinfo=UTC), datetime(2026, 12, 1, 23, 59, tzinfo=UTC), None):
                context = Context({"t": t})
                context.request = rf.get("/")  # as a RequestContext carries it
                cheap, django = both.render(context).split("|")
                assert cheap == django
    finally:
        set_script_prefix("/")


def test_no_template_comment_spans_lines():
    """Django's {# #} ends at the line's end: one over two lines is printed on the page (base.html
    showed its own comment at the top of every page)."""
    from pathlib import Path

    root = Path(__file__).resolve().parent.parent / "templates"
    open_comments = [f"{path.relative_to(root)}:{i}" for path in root.rglob("*.html")
                     for i, line in enumerate(path.read_text(encoding="utf-8").splitlines(), start=1)
                     if line.count("{#") > line.count("#}")]
    assert open_comments == []


@pytest.mark.django_db
def test_a_page_shows_no_template_source(owner_client, mock_memory):
    from tests.fake_memory import FakeMemory

    mock_memory(FakeMemory())
    html = owner_client.get("/").content.decode()
    assert "{#" not in html and "#}" not in html and "{%" not in html
