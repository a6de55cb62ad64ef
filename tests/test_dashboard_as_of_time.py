""""As of" takes a time as well as a day: a change made an hour ago is seen before it and after it,
on the facts list and the debugger, both memories. A day alone keeps meaning its end."""

import re
import uuid
from datetime import UTC, datetime, timedelta

import pytest
from django.urls import reverse

from dashboard.forms import AsOfDay
from tests.html import page

pytestmark = pytest.mark.django_db


@pytest.fixture(scope="module")
def service(either_service):
    return either_service


def test_as_of_a_time_today_shows_the_memory_before_a_change_made_since(owner_client, live_memory):
    t = uuid.uuid4().hex[:6]
    hour_ago = datetime.now(UTC) - timedelta(hours=1)
    with live_memory.client() as api:
        old = api.post("/facts", json={"text": f"The {t} office is in Leeds.", "created_at": (hour_ago - timedelta(hours=1))
                                       .strftime("%Y-%m-%dT%H:%M:%SZ")}).json()["id"]
        new = api.post("/facts", json={"text": f"The {t} office moved to York.", "supersedes": [old]}).json()["id"]
    then = {"q": t, "status": "current", "as_of": hour_ago.date().isoformat(), "as_of_time": hour_ago.strftime("%H:%M")}
    listed = page(owner_client.get(reverse("facts"), then))
    assert listed.select_one(f"#fact-{old}") is not None and listed.select_one(f"#fact-{new}") is None
    assert re.search(r"as it was at \d{4}-\d\d-\d\d \d\d:\d\d \(UTC\)", listed.select_one("#as-of-hint").text)
    assert listed.select_one("#id_as_of_time")["value"] == then["as_of_time"]
    now = page(owner_client.get(reverse("facts"), {"q": t, "status": "current"}))
    assert now.select_one(f"#fact-{new}") is not None and now.select_one(f"#fact-{old}") is None
    debugger = page(owner_client.get(reverse("recall"), {"q": f"Where is the {t} office?", **then}))
    ids = [li["data-fact-id"] for li in debugger.select("#columns section:nth-of-type(3) li[data-fact-id]")]
    assert str(old) in ids and str(new) not in ids
    assert then["as_of_time"] in debugger.select_one("#recall-when").text


def test_a_day_alone_is_its_end_and_a_time_to_come_is_now():
    yesterday = datetime.now(UTC).date() - timedelta(days=1)
    assert AsOfDay.time(yesterday).startswith(f"{yesterday.isoformat()}T23:59:59")
    assert AsOfDay.time(yesterday, datetime(2000, 1, 1, 9, 30).time()) == f"{yesterday.isoformat()}T09:30:00Z"
    assert AsOfDay.time(datetime.now(UTC).date(), (datetime.now(UTC) + timedelta(minutes=5)).time()) is None
    assert AsOfDay.time(None, datetime(2000, 1, 1, 9, 30).time()) is None
