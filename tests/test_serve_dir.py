"""`python -m memories serve --dir FOLDER`: a memory per FOLDER/NAME.db at /memories/NAME/, the
root the memory "default", named as the Worker names its Durable Objects."""

import pytest
from starlette.testclient import TestClient

from memories.serving.memory_folder import MemoryFolder
from memories.store import Memory
from tests.fakes import HashEmbedder
from tests.test_cli import run

TEXT = "Priya is the owner's sister."


@pytest.fixture
def api(folder_service):
    with folder_service.client() as c:
        yield c


def test_two_names_are_two_files_and_the_root_is_default(folder_service, api):
    a = api.post("/facts", json={"text": TEXT})
    b = api.post("/memories/work/facts", json={"text": TEXT})
    assert a.status_code == b.status_code == 201  # no dedup across memories: they are apart
    assert {p.name for p in folder_service.db.glob("*.db")} >= {"default.db", "work.db"}
    assert api.get("/memories/default/facts").json() == api.get("/facts").json()

    assert api.delete(f"/memories/work/facts/{b.json()['id']}").status_code == 200
    assert api.get(f"/facts/{a.json()['id']}").json()["text"] == TEXT  # the other memory keeps it
    assert api.get("/memories/work/facts").json()["total"] == 0
    assert "work" in api.get("/memories").json()["memories"]


@pytest.mark.parametrize("path", ["/memories/bad%20name/facts", "/memories/.hidden/facts", "/memories//facts",
                                  "/memories/" + "x" * 65 + "/facts"])
def test_a_bad_name_is_a_404_that_says_what_a_name_is(folder_service, api, path):
    r = api.get(path)
    assert r.status_code == 404
    error = r.json()["error"]
    assert error["code"] == "not_found" and "no memory named" in error["message"] and "letters, digits" in error["message"]


def test_without_the_secret_nothing_is_created(folder_service):
    import httpx

    assert httpx.get(folder_service.url + "/memories/nosecret/facts").status_code == 401
    for _ in range(20):
        health = httpx.get(folder_service.url + "/memories/nosecret/health")
        assert health.status_code == 200 and health.json() == {"ok": True}  # up, and nothing about the memory
    assert httpx.get(folder_service.url + "/memories").status_code == 401
    assert not (folder_service.db / "nosecret.db").exists()


def test_db_and_dir_are_one_or_the_other(tmp_path):
    result = run("serve", "--db", str(tmp_path / "m.db"), "--dir", str(tmp_path))
    assert result.returncode == 2 and "not allowed with argument" in result.stderr


def test_every_memory_shares_the_one_embedder(tmp_path):
    embedder, opened = HashEmbedder(), []

    def open_memory(path):
        opened.append(Memory(path, embedder))
        return opened[-1]

    with TestClient(MemoryFolder(tmp_path, "s", embedder, open_memory), headers={"X-Memory-Secret": "s"}) as c:
        assert [c.put(f"/memories/{name}").status_code for name in ("default", "home")] == [201, 201]
        assert c.post("/facts", json={"text": TEXT}).status_code == 201
        assert c.post("/memories/home/facts", json={"text": TEXT}).status_code == 201
        assert c.get("/memories/home/facts").json()["total"] == 1
        assert c.get("/memories").json() == {"memories": ["default", "home"]}
        assert c.post("/memories").status_code == 405
    assert len(opened) == 2 and all(m.embedder is embedder for m in opened)  # opened once each, one model


def test_import_and_export_url_reach_one_memory_by_name(folder_service, api, tmp_path):
    import json
    import os

    source = tmp_path / "notes.jsonl"
    source.write_text(json.dumps({"text": "Bins go out on Tuesday.", "type": "fact", "source": "chat"}) + "\n")
    env = {**os.environ, "MEMORY_SECRET": folder_service.secret}
    url = folder_service.url_of("notes")
    assert run("import", str(source), "--url", url, "--quiet", env=env).returncode == 0
    assert api.get("/memories/notes/facts").json()["total"] == 1
    assert "Bins go out" not in json.dumps(api.get("/facts").json())
    exported = run("export", "--url", url, env=env).stdout.splitlines()
    assert [json.loads(line)["text"] for line in exported] == ["Bins go out on Tuesday."]
