"""The near-duplicates page (issue 20, item 3): one scale for the slider and the chart, the
threshold always drawn, captions that match the chart, look-alikes kept apart, actions in place."""

from __future__ import annotations

import re
import subprocess
from datetime import UTC, datetime
import sys

import httpx
import pytest
from django.urls import reverse

from tests.fake_memory import FakeMemory, fact
from tests.memory_service import ROOT

pytestmark = pytest.mark.django_db

SISTER, BROTHER = fact(1, "Leon's sister is Emil."), fact(2, "Leon's brother is Emil.")
PASSPORT, EXPIRY = fact(3, "The owner's passport expires in 2028."), fact(4, "The owner's passport expires in 2028!")


def memory(nearest, pairs=(), floor=None, facts=(SISTER, BROTHER, PASSPORT, EXPIRY)):
    fake = FakeMemory(*facts)

    def handler(request):
        if request.url.path == "/duplicates/nearest":
            return httpx.Response(200, json={"nearest": [{"id": i, "score": s} for i, s in enumerate(nearest)], "floor": floor})
        if request.url.path == "/duplicates":
            t = float(request.url.params["threshold"])
            shown = [p for p in pairs if p["score"] >= t]
            return httpx.Response(200, json={"pairs": shown, "total": len(shown)})
        return fake(request)

    return handler


def page(client, threshold: str, **kw) -> str:
    return client.get(reverse("duplicates"), {"threshold": threshold}, **kw).content.decode()


def slider(html: str) -> tuple[float, float]:
    tag = re.search(r'<input type="range" id="id_threshold"[^>]*>', html).group(0)
    return float(re.search(r'min="([\d.]+)"', tag).group(1)), float(re.search(r'max="([\d.]+)"', tag).group(1))


def test_the_slider_and_the_chart_share_one_scale_and_the_line_is_always_drawn(owner_client, mock_memory):
    mock_memory(memory([0.85, 0.98], floor=0.8))
    for threshold in ("0.50", "0.62", "0.79", "0.97", "1.00"):
        html = page(owner_client, threshold)
        low, high = slider(html)
        ticks = re.findall(r'class="tick" text-anchor="\w+">(\d\.\d)</text>', html)
        assert (ticks[0], ticks[-1]) == (f"{low:.1f}", f"{high:.1f}"), threshold
        x = float(re.search(r'<line x1="([\d.]+)"', html).group(1))
        assert x == pytest.approx((float(threshold) - low) / (high - low) * 1000, abs=0.2), threshold


def test_below_the_floor_a_listed_pair_has_its_bar_and_the_unknown_is_shaded(owner_client, mock_memory):
    pair = {"a": PASSPORT, "b": EXPIRY, "score": 0.662}
    mock_memory(memory([0.85, 0.98], [pair], floor=0.8))
    html = page(owner_client, "0.66")
    assert 'data-low="0.66"' in html  # the pair's bar
    assert re.search(r'<rect x="0" y="0" width="320.0" height="120" class="unknown">', html)  # 0.50-0.66 shaded
    assert "4 of 4 facts" in html and "below 0.66, is where the memory lists no fact (under its review floor)" in html


def test_an_empty_memory_draws_nothing_and_says_so(owner_client, mock_memory):
    mock_memory(memory([], floor=0.8))
    html = page(owner_client, "0.97")
    assert "<svg" not in html and "0 of 0" not in html and "tallest bar is 1" not in html
    assert "No fact has a same-type neighbour at or above the review floor, 0.80: nothing to draw." in html


def test_the_empty_message_points_at_the_closest_pair_below(owner_client, mock_memory):
    mock_memory(memory([0.81, 0.81, 0.86], floor=0.8))
    html = page(owner_client, "0.90")
    empty = re.search(r'<li class="empty">(.*?)</li>', html, re.S).group(1)
    assert "about 0.85" not in empty and "The closest below it is at 0.86: lower the threshold to 0.86" in empty
    mock_memory(memory([0.99], floor=0.8))
    empty = re.search(r'<li class="empty">(.*?)</li>', page(owner_client, "0.82"), re.S).group(1)
    assert "Lower it" not in empty and "None below it either, down to the review floor 0.80." in " ".join(empty.split())


@pytest.mark.parametrize("a,b", [
    ("Leon's sister is Emil.", "Leon's brother is Emil."),
    ("Mara's mother lives in Porto.", "Mara's father lives in Porto."),
    ("The dentist is on 5 March.", "The dentist is on 6 March."),
    ("Swimming is on Monday.", "Swimming is on Tuesday."),
    ("Leo likes broccoli.", "Leo does not like broccoli."),
])
def test_look_alikes_may_conflict_and_offer_keep_both_first(a, b):
    """The memory's own rule (its pairs' `distinct`), with the dashboard's relation words beside it."""
    from dashboard.lookalike import conflict
    from memories.writes.dedup import distinct  # what the memory puts in each pair's `distinct`
    from memories.client import Fact, Pair

    def pair(x, y):
        when = datetime(2026, 11, 30, tzinfo=UTC)
        return Pair(Fact(1, x, "fact", "", when, when), Fact(2, y, "fact", "", when, when), 0.95, distinct(x, y))

    assert conflict(pair(a, b))
    assert conflict(pair("The owner's passport expires in 2028.", "Owner passport expiry: 2028.")) is None


def test_a_look_alike_pair_is_labelled_and_not_offered_to_merge(owner_client, mock_memory):
    mock_memory(memory([0.954, 0.954, 0.99, 0.99], [{"a": SISTER, "b": BROTHER, "score": 0.954},
                                                    {"a": PASSPORT, "b": EXPIRY, "score": 0.99}]))
    html = page(owner_client, "0.95")
    look = re.search(r'<li class="pair lookalike" id="pair-1-2">.*?</li>', html, re.S).group(0)
    assert "Look-alikes that may conflict</strong>: they differ in a relation (brother / sister)" in look
    buttons = re.findall(r'<button type="submit" name="action" value="(\w+)"', look)
    assert buttons[0] == "not_duplicate" and ">Keep both<" in look and 'value="merge"' not in look
    plain = re.search(r'<li class="pair" id="pair-3-4">.*?</li>', html, re.S).group(0)
    assert "Look-alikes" not in plain and 'value="merge"' in plain


def test_the_dashboard_imports_nothing_of_the_engine():
    """It reaches a memory only through memories.client (and the importers' parsers, which import
    nothing of the engine either): every dashboard module imported, no other module of the
    memories package is loaded."""
    code = ("import os, sys, pkgutil, importlib, django; os.environ.setdefault('DJANGO_SETTINGS_MODULE', 'tests.settings'); "
            "django.setup(); import dashboard; "
            "[importlib.import_module(m.name) for m in pkgutil.walk_packages(dashboard.__path__, 'dashboard.')]; "
            "print(sorted(m for m in sys.modules if m.startswith('memories.') and m != 'memories.client'"
            " and not m.startswith('memories.client.')"
            " and m != 'memories.importers' and not m.startswith('memories.importers.')))")
    out = subprocess.run([sys.executable, "-c", code], cwd=ROOT, capture_output=True, text=True, check=True).stdout
    assert out.strip() == "[]"


def test_an_action_from_htmx_replaces_the_pair_in_place(owner_client, mock_memory):
    mock_memory(memory([0.99, 0.99], [{"a": PASSPORT, "b": EXPIRY, "score": 0.99}]))
    html = page(owner_client, "0.95")
    form = re.search(r'<li class="pair" id="pair-3-4">.*?<form method="post" action="([^"]+)" class="resolve" ([^>]*)>', html, re.S)
    assert 'hx-target="#pair-3-4"' in form.group(2) and 'hx-swap="outerHTML"' in form.group(2)
    done = owner_client.post(form.group(1), {"a": 3, "b": 4, "action": "not_duplicate", "next": "threshold=0.95"},
                             headers={"HX-Request": "true", "HX-Target": "pair-3-4"})
    body = done.content.decode()
    assert done.status_code == 200 and "<html" not in body
    assert re.match(r'\s*<li class="pair resolved success" id="pair-3-4" role="status">', body) and "Kept both #3 and #4" in body
    assert 'value="undo_not_duplicate"' in body
    undone = owner_client.post(form.group(1), {"a": 3, "b": 4, "action": "undo_not_duplicate"}, headers={"HX-Request": "true"})
    assert "#3 and #4 are shown as a pair again" in undone.content.decode()
    empty = owner_client.post(form.group(1), {"a": 3, "b": 4, "action": "merge", "text": " "}, headers={"HX-Request": "true"})
    assert empty.status_code == 422 and 'class="pair resolved error"' in empty.content.decode()
    assert "The merged text is empty; nothing was changed." in empty.content.decode()
    # Without JavaScript: the page again, with the message.
    plain = owner_client.post(form.group(1), {"a": 3, "b": 4, "action": "not_duplicate", "next": "threshold=0.95"})
    assert plain.status_code == 302 and plain["Location"] == "/duplicates/?threshold=0.95"


def test_the_tallest_bar_is_said_in_the_caption_not_over_the_bars(owner_client, mock_memory):
    mock_memory(memory([0.85, 0.98, 0.99, 0.99], floor=0.8))
    html = page(owner_client, "0.90")
    svg = html.split("<svg")[1].split("</svg>")[0]
    assert "tallest" not in svg and "The tallest bar is" in html.split("<figcaption>")[1]
