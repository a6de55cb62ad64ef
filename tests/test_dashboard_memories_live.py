"""The dashboard on a real `serve --dir` service holding two memories: real HTTP, real model."""

import re

import pytest


pytestmark = pytest.mark.django_db

TEXT = "Ines moved to Madrid in March."


def add(client, prefix: str, text: str) -> int:
    r = client.post(f"{prefix}/facts/new", {"text": text, "type": "fact", "source": "test"}, headers={"HX-Request": "true"})
    assert r.status_code == 200 and "Added" in r.content.decode(), r.content.decode()
    return int(re.search(r"fact #(\d+)", r.content.decode()).group(1))


def test_a_delete_in_one_memory_leaves_the_other_untouched(owner_client, live_memories):
    home, work = add(owner_client, "", TEXT), add(owner_client, "/m/work", TEXT)  # no dedup across memories
    assert owner_client.post(f"/m/work/facts/{work}/delete").status_code == 302

    with live_memories.client() as api:
        assert api.get(f"/facts/{home}").json()["text"] == TEXT
        assert api.get(f"/memories/work/facts/{work}").status_code == 404
    assert TEXT in owner_client.get("/", {"q": "Madrid"}).content.decode()
    assert TEXT not in owner_client.get("/m/work/", {"q": "Madrid"}).content.decode()
    recall = owner_client.get("/recall/", {"q": "Where does Ines live?"}).content.decode()
    assert TEXT in recall

    with live_memories.client() as api:
        [entry] = api.get("/memories/work/history", params={"fact_id": work, "op": "delete"}).json()["entries"]
        assert api.get("/history", params={"op": "delete"}).json()["entries"] == []  # the default memory's is empty
    assert TEXT not in owner_client.get("/trash/").content.decode()
    assert owner_client.post(f"/m/work/trash/{entry['id']}/undo").status_code == 302
    with live_memories.client() as api:
        assert api.get(f"/memories/work/facts/{work}").json()["text"] == TEXT  # back where it was deleted from
        assert api.get("/facts", params={"q": "Madrid"}).json()["total"] == 1  # and only there


def test_a_memory_the_service_holds_is_in_the_switcher_without_configuring_it(owner_client, live_memories):
    with live_memories.client() as api:
        assert api.put("/memories/garden").status_code == 201  # made by another client, not this dashboard
        assert api.post("/memories/garden/facts", json={"text": "The roses need water on Sundays."}).status_code == 201
    html = owner_client.get("/").content.decode()
    assert '<a href="/m/garden/">garden</a>' in html
    page = owner_client.get("/m/garden/").content.decode()
    assert "The roses need water on Sundays." in page and f"{live_memories.url}/memories/garden" in page


def test_the_recall_quality_page_offers_the_shipped_sets_and_loads_them_beside_the_owners(owner_client, live_memories):
    from dashboard.models import EvalCase

    page = owner_client.get("/evaluate/").content.decode()
    assert 'id="shipped-sets"' in page and "Load the shipped sets" in page
    with live_memories.client() as api:
        before = api.get("/facts").json()["total"]
    done = owner_client.post("/evaluate/shipped", follow=True).content.decode()
    assert "Loaded the shipped sets: “personal”" in done and "“lookalikes”" in done
    assert set(EvalCase.objects.values_list("memory", flat=True)) == {"eval-personal", "eval-lookalikes"}
    with live_memories.client() as api:
        assert api.get("/facts").json()["total"] == before  # nothing written into the owner's memory
        assert api.get("/memories/eval-personal/facts").json()["total"] > 0
    assert 'id="shipped-sets"' not in owner_client.get("/evaluate/").content.decode()
    EvalCase.objects.filter(suite="lookalikes").delete()  # one of the two gone: the page names it
    page = owner_client.get("/evaluate/").content.decode()
    assert "Not loaded yet: lookalikes." in page and "Only the cases saved" not in page


def test_a_named_memory_the_service_does_not_hold_offers_to_create_it(owner_client, live_memories, settings):
    settings.MEMORY_NAMES = ["default", "work", "garden-2"]
    r = owner_client.get("/m/garden-2/")
    page = r.content.decode()
    assert r.status_code == 404 and "There is no memory named “garden-2” here yet" in page
    assert "change what you typed" not in page  # the owner typed nothing: no memory, not a refusal
    assert 'name="name" value="garden-2"' in page and "csrfmiddlewaretoken" in page and live_memories.secret not in page
    created = owner_client.post("/memories/new", {"name": "garden-2"}, follow=True)
    assert created.status_code == 200 and "Created the memory “garden-2”." in created.content.decode()
    with live_memories.client() as api:
        assert "garden-2" in api.get("/memories").json()["memories"]
