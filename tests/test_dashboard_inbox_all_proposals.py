"""The Inbox's `b` on a fact that proposes several: "Both true for all N" decides every pair, not
only the first, and one Undo brings them all back. Both memories."""

import re

import pytest

from tests.html import soup
from tests.test_dashboard_inbox import OWNER, add, got, inbox_row, submit, tag

pytestmark = pytest.mark.django_db


@pytest.fixture(scope="module")
def service(either_service):
    return either_service


def test_both_true_for_all_decides_each_proposal_of_the_fact(owner_client, live_memory):
    t = tag()
    with live_memory.client() as api:
        olds = [add(api, f"The {t} standup is at {time}.", headers=OWNER)["id"] for time in ("9:30", "9:15", "8:45")]
        new = add(api, f"The {t} standup is at 10:00 now.")
        assert sorted(c["id"] for c in new["conflicts"]) == sorted(olds)
        new = new["id"]
    row, _ = inbox_row(owner_client, new)
    assert [b.text for b in row.select("[data-key=b]")] == ["Both true for all 3"]  # the key decides all, not the first
    form = row.select_one("form.all")
    data = {"id": new, "old": [i["value"] for i in form.select("input[name=old]")], "resolution": "keep_both"}
    done = owner_client.post(form["hx-post"], data, headers={"HX-Request": "true"})  # every old, as the browser posts them
    line = soup(done).select_one(f"li#inbox-{new}.done.success")
    said = re.search(r"each of ((?:#\d+(?:, )?)+) are true", line.text)
    assert said and {int(i) for i in re.findall(r"\d+", said.group(1))} == set(olds) and "approved" in line.text
    with live_memory.client() as api:
        assert got(api, new)["reviewed_at"] is not None and all(got(api, o)["superseded_by"] is None for o in olds)
        open_now = {(c["old"]["id"], c["new"]["id"]) for c in api.get("/conflicts", params={"limit": 100}).json()["conflicts"]}
        assert not open_now & {(o, new) for o in olds}
    back = submit(owner_client, line.select_one("form.undo"))
    again = soup(back).select_one(f"li#inbox-{new}")
    assert len(again.select(".conflict-note")) == 3  # all three open again, with one Undo
    with live_memory.client() as api:
        assert got(api, new)["reviewed_at"] is None


def test_a_fact_with_one_proposal_keeps_b_on_its_own_both_true(owner_client, live_memory):
    t = tag()
    with live_memory.client() as api:
        old = add(api, f"The {t} gym opens at 6:00.", headers=OWNER)["id"]
        new = add(api, f"The {t} gym opens at 7:00 now.")["id"]
    row, _ = inbox_row(owner_client, new)
    [key] = row.select("[data-key=b]")
    assert key.text == "Both true" and key.find_parent("form").select_one("input[name=old]")["value"] == str(old)
    assert row.select_one("form.all") is None
