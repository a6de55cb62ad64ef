"""The agent's door: `python -m memories mcp` as a real subprocess, driven over stdio (and
streamable HTTP, behind its bearer token) by the MCP SDK's own client, against both memories
(the local service and a Worker's Durable Object)."""

from __future__ import annotations

import json
import os
import re
import secrets
import stat
import subprocess
import sys
import time
from concurrent.futures import ThreadPoolExecutor
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path

import anyio
import httpx
import httpx2
import pytest
from mcp import Client
from mcp.client.stdio import StdioServerParameters
from mcp.client.streamable_http import streamable_http_client

from tests.memory_service import ROOT, free_port

pytestmark = pytest.mark.slow
TOOLS = {"memory_save", "memory_search", "memory_get", "memory_update", "memory_delete", "memory_stats", "memory_supersede"}


@pytest.fixture(scope="module")
def service(either_service):
    return either_service


def session(service, client_info=None, **env):
    params = StdioServerParameters(
        command=sys.executable, args=["-m", "memories", "mcp"], cwd=str(ROOT),
        env={**os.environ, "MEMORY_URL": service.url, "MEMORY_SECRET": service.secret, "PYTHONPATH": str(ROOT), **env},
    )
    return Client(params, client_info=client_info) if client_info else Client(params)


def in_thread(main):
    """anyio.run in a thread of its own: the browser tests' Playwright keeps an event loop
    running in the main thread for the whole session."""
    with ThreadPoolExecutor(1) as pool:
        return pool.submit(anyio.run, main).result()


def run(service, steps, client_info=None, **env):
    """Run `steps(client)` in one MCP session and return what it returns."""
    async def main():
        async with session(service, client_info, **env) as client:
            return await steps(client)

    return in_thread(main)


def data(result) -> dict:
    assert not result.is_error, result.content
    return result.structured_content if isinstance(result.structured_content, dict) else json.loads(result.content[0].text)


def error_text(result) -> str:
    assert result.is_error
    return " ".join(getattr(c, "text", "") for c in result.content)


def test_the_tools_are_listed_with_schemas_and_descriptions(service):
    async def steps(client):
        return (await client.list_tools()).tools

    tools = {t.name: t for t in run(service, steps)}
    assert set(tools) == TOOLS
    for tool in tools.values():
        assert len(tool.description) > 30 and tool.input_schema["type"] == "object"
    search = tools["memory_search"].input_schema["properties"]
    assert set(search["mode"]["enum"]) == {"hybrid", "keyword", "vector"} and search["limit"]["maximum"] == 100
    assert tools["memory_save"].input_schema["required"] == ["text"]
    assert tools["memory_delete"].annotations.destructive_hint is True


def test_save_find_update_and_delete_through_mcp(service):
    async def steps(client):
        saved = data(await client.call_tool("memory_save", {"text": "The owner's bike lock code is 2718.", "source": "chat"}))
        again = data(await client.call_tool("memory_save", {"text": "the owner's BIKE lock code is 2718."}))
        found = {mode: data(await client.call_tool("memory_search", {"query": "bike lock code", "mode": mode, "limit": 5}))
                 for mode in ("hybrid", "keyword", "vector")}
        got = data(await client.call_tool("memory_get", {"id": saved["id"]}))
        updated = data(await client.call_tool("memory_update", {"id": saved["id"], "text": "The owner's bike lock code is 3141."}))
        stats = data(await client.call_tool("memory_stats", {}))
        deleted = data(await client.call_tool("memory_delete", {"id": saved["id"]}))
        gone = await client.call_tool("memory_get", {"id": saved["id"]})
        return saved, again, found, got, updated, stats, deleted, gone

    saved, again, found, got, updated, stats, deleted, gone = run(service, steps)
    assert saved["created"] is True and saved["fact"]["source"] == "chat"
    assert again["created"] is False and again["id"] == saved["id"]
    assert again["duplicate"]["match"] == "exact" and str(saved["id"]) in again["duplicate"]["why"]
    assert found["hybrid"]["mode"] == "hybrid" and found["hybrid"]["hits"][0]["fact"]["id"] == saved["id"]
    assert found["hybrid"]["hits"][0]["via"] == "both"
    assert found["keyword"]["mode"] == "keyword" and {h["via"] for h in found["keyword"]["hits"]} == {"kw"}
    assert found["vector"]["mode"] == "vector" and {h["via"] for h in found["vector"]["hits"]} == {"vec"}
    assert got["text"] == "The owner's bike lock code is 2718."
    assert updated["text"].endswith("3141.") and stats["facts"] >= 1 and stats["consistent"] is True
    assert deleted["deleted"] == saved["id"]
    assert "not_found" in error_text(gone)


def test_an_agent_replaces_a_fact_and_search_answers_from_what_is_true_now(service):
    """The lifecycle loop as an agent runs it: a stated fact, its update with supersedes, and a
    search that returns only the update; then a save that proposes a replacement, which the agent
    confirms with memory_supersede."""
    async def steps(client):
        old = data(await client.call_tool("memory_save", {"text": "The owner's team standup is at 9:30."}))
        new = data(await client.call_tool("memory_save", {"text": "The owner's team standup is at 9:00.",
                                                          "supersedes": [old["id"]]}))
        found = data(await client.call_tool("memory_search", {"query": "When is the team standup?", "limit": 5}))
        then = data(await client.call_tool("memory_search", {"query": "When is the team standup?", "limit": 5,
                                                             "as_of": old["fact"]["created_at"]}))
        a = data(await client.call_tool("memory_save", {"text": "The owner's gym locker is number 41."}))
        b = data(await client.call_tool("memory_save", {"text": "The owner's gym locker is number 17."}))
        confirmed = data(await client.call_tool("memory_supersede", {"old": a["id"], "new": b["id"]}))
        locker = data(await client.call_tool("memory_search", {"query": "Which gym locker is the owner's?", "limit": 5}))
        return old, new, found, then, a, b, confirmed, locker

    old, new, found, then, a, b, confirmed, locker = run(service, steps)
    ids = [h["fact"]["id"] for h in found["hits"]]
    assert new["id"] in ids and old["id"] not in ids
    assert all(h["stored"] for h in found["hits"])
    assert old["id"] in [h["fact"]["id"] for h in then["hits"]] and new["id"] not in [h["fact"]["id"] for h in then["hits"]]
    [proposal] = [p for p in b["may_replace"] if p["id"] == a["id"]]
    assert "41 / 17" in proposal["what_to_do"] and "memory_supersede" in proposal["what_to_do"]
    assert confirmed["replaced"]["superseded_by"] == b["id"]
    locker_ids = [h["fact"]["id"] for h in locker["hits"]]
    assert b["id"] in locker_ids and a["id"] not in locker_ids


def test_with_review_before_an_agents_save_is_pending_until_the_owner_approves(service, api):
    """`review: before` over MCP: the save says it is pending, search does not return it, and once
    the owner reviews it (POST /facts/review, as the Inbox does) search does."""
    assert api.put("/settings", json={"review": {"mode": "before"}}).status_code == 200
    try:
        async def save(client):
            return data(await client.call_tool("memory_save", {"text": "The owner's spare key is under the blue pot."}))

        async def search(client):
            return data(await client.call_tool("memory_search", {"query": "Where is the spare key?", "limit": 5}))

        saved = run(service, save)
        assert saved["created"] is True and "pending" in saved["pending"]
        assert saved["id"] not in [h["fact"]["id"] for h in run(service, search)["hits"]]
        assert api.post("/facts/review", json={"ids": [saved["id"]]}).json()["reviewed"] == [saved["id"]]
        hits = run(service, search)["hits"]
        assert hits[0]["fact"]["id"] == saved["id"] and "unreviewed" not in hits[0]
    finally:
        api.put("/settings", json={"review": {"mode": "after"}})


def test_a_client_the_owner_trusts_replaces_at_once_and_is_told_so(service, api):
    """`proposals: replace` with the agent trusted: its save that proposes one fact replaces it,
    and the answer says so under `replaced`, not `may_replace`; an untrusted agent is asked."""
    from mcp_types import Implementation

    assert api.put("/settings", json={"proposals": "replace", "review": {"trusted": ["trusted-agent"]}}).status_code == 200
    try:
        async def steps(client):
            a = data(await client.call_tool("memory_save", {"text": "The owner's bike locker is number 8."}))
            b = data(await client.call_tool("memory_save", {"text": "The owner's bike locker is number 23."}))
            return a, b

        a, b = run(service, steps, client_info=Implementation(name="trusted-agent", version="1.0"))
        [done] = b["replaced"]
        assert done["id"] == a["id"] and "at once" in done["why"] and "may_replace" not in b
        assert api.get(f"/facts/{a['id']}").json()["superseded_by"] == b["id"]

        async def other(client):
            c = data(await client.call_tool("memory_save", {"text": "The owner's bike locker is number 31."}))
            return c

        c = run(service, other, client_info=Implementation(name="other-agent", version="1.0"))
        assert [p["id"] for p in c["may_replace"]] == [b["id"]] and "replaced" not in c
    finally:
        assert api.put("/settings", json={"proposals": "propose", "review": {"trusted": []}}).status_code == 200


def test_bad_calls_come_back_as_tool_errors_with_the_contracts_message(service):
    async def steps(client):
        return [
            await client.call_tool("memory_save", {"text": ""}),
            await client.call_tool("memory_save", {"text": "x", "type": "opinion"}),
            await client.call_tool("memory_search", {"query": "x", "mode": "psychic"}),
            await client.call_tool("memory_update", {"id": 1}),
            await client.call_tool("memory_delete", {"id": 10**9}),
            await client.call_tool("memory_get", {}),
        ]

    empty, bad_type, bad_mode, nothing, unknown, missing = run(service, steps)
    assert all(r.is_error for r in (empty, bad_type, bad_mode, missing))
    assert "nothing to change" in error_text(nothing)
    assert "not_found" in error_text(unknown) and "no fact with id" in error_text(unknown)


def test_a_duplicate_edit_names_the_other_fact(service):
    async def steps(client):
        a = data(await client.call_tool("memory_save", {"text": "Ilse plays the cello."}))
        b = data(await client.call_tool("memory_save", {"text": "Ilse plays the oboe."}))
        return a, await client.call_tool("memory_update", {"id": b["id"], "text": "ilse plays the CELLO."})

    a, r = run(service, steps)
    assert "duplicate" in error_text(r) and str(a["id"]) in error_text(r)


def test_a_memory_that_is_down_is_a_tool_error_not_a_crash(service):
    async def steps(client):
        return await client.call_tool("memory_search", {"query": "anything"})

    r = run(service, steps, MEMORY_URL="http://127.0.0.1:9")
    assert "cannot reach the memory service" in error_text(r)


def start(service, *args, **env) -> subprocess.CompletedProcess:
    """`python -m memories mcp` over stdio with its input closed: it starts, says what it says, and ends."""
    environ = {**os.environ, "MEMORY_URL": service.url, "MEMORY_SECRET": service.secret, "PYTHONPATH": str(ROOT), **env}
    return subprocess.run([sys.executable, "-m", "memories", "mcp", *args], cwd=ROOT, env=environ, input="",
                          capture_output=True, text=True, timeout=60)


def test_the_server_says_which_memory_it_serves_at_start_and_in_its_stats(service):
    named = "/memories/" in service.url  # the Worker's memory is one of its names; serve --db's is its root
    expected = f"the memory '{service.name}' at {service.url}" if named else f"the root memory at {service.url}"
    started = start(service)
    assert started.returncode == 0 and f"mcp: serving {expected}" in started.stderr, started.stderr

    async def steps(client):
        return data(await client.call_tool("memory_stats", {}))

    assert run(service, steps)["memory"] == expected


def test_a_start_on_a_memory_that_is_not_there_fails_saying_which_there_are(service):
    root = service.host.url if "/memories/" in service.url else service.url
    typo = f"typo-{secrets.token_hex(4)}"
    started = start(service, "--memory", typo, MEMORY_URL=root)
    assert started.returncode != 0 and f"error: there is no memory '{typo}' at {root}/memories/{typo}" in started.stderr
    if "/memories/" in service.url:  # the Worker lists its memories and says how to make one
        assert service.name in started.stderr and f"PUT /memories/{typo}" in started.stderr


def test_the_readme_snippet_starts_a_server_an_agent_host_can_use(service):
    """The configuration the README gives an agent host, as a host would run it."""
    import re

    readme = (ROOT / "README.md").read_text(encoding="utf-8")
    snippet = re.search(r"<!-- mcp-config -->\s*```json\n(.*?)```", readme, re.S).group(1)
    config = json.loads(snippet)["mcpServers"]["memory"]
    assert config["args"] == ["-m", "memories", "mcp"]
    command = config["command"].replace("/path/to/memory-desk/.venv/bin/python", sys.executable)
    env = {**config["env"], "MEMORY_URL": service.url, "MEMORY_SECRET": service.secret}
    params = StdioServerParameters(command=command, args=config["args"], cwd=str(ROOT), env={**os.environ, **env})

    async def main():
        async with Client(params) as client:
            saved = data(await client.call_tool("memory_save", {"text": "The owner's README test fact: kiwis."}))
            found = data(await client.call_tool("memory_search", {"query": "kiwis"}))
            return saved, found

    saved, found = in_thread(main)
    assert saved["created"] and found["hits"][0]["fact"]["id"] == saved["id"]


def test_what_an_agent_does_through_mcp_is_in_the_history_under_its_name_and_undoable(service, api):
    from mcp_types import Implementation

    async def steps(client):
        saved = data(await client.call_tool("memory_save", {"text": "The owner's locker code is in the blue notebook."}))
        data(await client.call_tool("memory_search", {"query": "locker code notebook"}))
        data(await client.call_tool("memory_delete", {"id": saved["id"]}))
        return saved["id"]

    fid = run(service, steps, client_info=Implementation(name="claude-code", version="2.1.0"))
    entries = api.get("/history", params={"fact_id": fid}).json()["entries"]
    assert [(e["op"], e["client"]) for e in entries] == [("delete", "claude-code 2.1.0"), ("add", "claude-code 2.1.0")]
    logged = api.get("/recalls", params={"q": "locker code notebook"}).json()["recalls"]
    assert logged[0]["client"] == "claude-code 2.1.0" and fid in [r["id"] for r in logged[0]["results"]]
    undone = api.post(f"/history/{entries[0]['id']}/undo").json()
    assert undone["restored"] and api.get(f"/facts/{fid}").json()["text"] == "The owner's locker code is in the blue notebook."


# -- streamable HTTP: a loopback port any process on the machine can reach -------------------

INITIALIZE = {"jsonrpc": "2.0", "id": 1, "method": "initialize",
              "params": {"protocolVersion": "2025-06-18", "capabilities": {}, "clientInfo": {"name": "curl", "version": "1"}}}
ACCEPT = {"Accept": "application/json, text/event-stream"}


@dataclass
class HttpServer:
    url: str
    log: Path

    def post(self, body: dict, **headers) -> httpx.Response:
        return httpx.post(self.url, json=body, headers={**ACCEPT, **headers}, timeout=30)


@contextmanager
def http_server(home: Path, service=None, **env):
    """`python -m memories mcp --http PORT` with DESK_HOME=home (where local.env is), until the block ends."""
    port = free_port()
    log = home / f"mcp-{port}.log"
    environ = {k: v for k, v in os.environ.items() if k != "MCP_TOKEN"}
    environ |= {"MEMORY_URL": service.url if service else "http://127.0.0.1:9", "MEMORY_SECRET": service.secret if service else "x",
                "PYTHONPATH": str(ROOT), "DESK_HOME": str(home), **env}
    process = subprocess.Popen([sys.executable, "-m", "memories", "mcp", "--http", str(port)], cwd=ROOT, env=environ,
                               stdout=log.open("wb"), stderr=subprocess.STDOUT)
    url = f"http://127.0.0.1:{port}/mcp"
    try:
        deadline = time.monotonic() + 60
        while True:  # until it answers at all: without a token, a 401
            assert process.poll() is None, log.read_text()
            try:
                httpx.get(url, timeout=2)
                break
            except httpx.TransportError:
                assert time.monotonic() < deadline, log.read_text()
                time.sleep(0.1)
        yield HttpServer(url, log)
    finally:
        process.terminate()
        process.wait(10)


def assert_refused(r: httpx.Response, challenge: str) -> None:
    assert r.status_code == 401, r.text
    assert r.headers["WWW-Authenticate"] == challenge
    assert r.json()["error"]["code"] == "unauthorized" and "memory-desk" not in r.text


def test_the_http_server_answers_401_without_the_token_or_with_a_wrong_one(service, tmp_path):
    token = secrets.token_urlsafe(24)
    with http_server(tmp_path, service, MCP_TOKEN=token) as mcp:
        assert_refused(mcp.post(INITIALIZE), 'Bearer realm="memory-desk"')
        for wrong in ("Bearer " + secrets.token_urlsafe(24), "Bearer " + token[:-1], "Bearer", f"Basic {token}", token):
            assert_refused(mcp.post(INITIALIZE, Authorization=wrong),
                           'Bearer realm="memory-desk"' + (', error="invalid_token"' if " " in wrong else ""))
        search = {"jsonrpc": "2.0", "id": 2, "method": "tools/call", "params": {"name": "memory_search", "arguments": {"query": "bank PIN"}}}
        assert_refused(mcp.post(search), 'Bearer realm="memory-desk"')
        assert_refused(httpx.get(mcp.url, headers=ACCEPT), 'Bearer realm="memory-desk"')
        right = mcp.post(INITIALIZE, Authorization=f"Bearer {token}")
    assert right.status_code == 200 and '"name":"memory-desk"' in right.text
    assert not (tmp_path / "local.env").exists()  # the environment's token is the one, and nothing is written


def http_session(url: str, token: str, steps):
    """Run `steps(client)` in one MCP session over streamable HTTP, sending the token as a host does."""
    async def main():
        async with httpx2.AsyncClient(headers={"Authorization": f"Bearer {token}"}, timeout=60) as http:
            async with Client(streamable_http_client(url, http_client=http)) as client:
                return await steps(client)

    return in_thread(main)


def test_with_the_token_an_agent_saves_searches_and_deletes_over_http(service, tmp_path):
    token = secrets.token_urlsafe(24)

    async def steps(client):
        saved = data(await client.call_tool("memory_save", {"text": "The owner's bank PIN is 4711 (HTTP test)."}))
        found = data(await client.call_tool("memory_search", {"query": "bank PIN 4711"}))
        deleted = data(await client.call_tool("memory_delete", {"id": saved["id"]}))
        return saved, found, deleted

    with http_server(tmp_path, service, MCP_TOKEN=token) as mcp:
        saved, found, deleted = http_session(mcp.url, token, steps)
    assert saved["created"] and found["hits"][0]["fact"]["id"] == saved["id"] and deleted["deleted"] == saved["id"]


def test_a_generated_token_is_saved_in_local_env_printed_once_and_reused(tmp_path):
    (tmp_path / "local.env").write_text("# Written by `make run`\nMEMORY_SECRET=kept\n")
    with http_server(tmp_path) as mcp:
        settings = (tmp_path / "local.env").read_text()
        [token] = re.findall(r"^MCP_TOKEN=(\S+)$", settings, re.M)
        assert settings.startswith("# Written by `make run`\nMEMORY_SECRET=kept\n")
        assert stat.S_IMODE((tmp_path / "local.env").stat().st_mode) == 0o600
        assert mcp.post(INITIALIZE, Authorization=f"Bearer {token}").status_code == 200
        assert_refused(mcp.post(INITIALIZE), 'Bearer realm="memory-desk"')
        first_log = mcp.log
    assert f"Authorization: Bearer {token}" in first_log.read_text()  # printed, for the owner to hand on

    with http_server(tmp_path) as again:
        assert again.post(INITIALIZE, Authorization=f"Bearer {token}").status_code == 200
        second_log = again.log
    assert token not in second_log.read_text()  # printed once, when it was made
    assert re.findall(r"^MCP_TOKEN=(\S+)$", (tmp_path / "local.env").read_text(), re.M) == [token]


def test_a_short_token_from_the_environment_is_refused_at_start(tmp_path):
    env = {**os.environ, "MEMORY_SECRET": "x", "MCP_TOKEN": "1234", "DESK_HOME": str(tmp_path), "PYTHONPATH": str(ROOT)}
    done = subprocess.run([sys.executable, "-m", "memories", "mcp", "--http", str(free_port())], cwd=ROOT, env=env,
                          capture_output=True, text=True, timeout=60)
    assert done.returncode != 0 and "MCP_TOKEN must be at least 16" in done.stderr


def test_the_readme_http_snippet_is_what_a_host_sends(service, tmp_path):
    """The README's configuration for an agent host that speaks streamable HTTP, as such a host uses it."""
    readme = (ROOT / "README.md").read_text(encoding="utf-8")
    snippet = re.search(r"<!-- mcp-http-config -->\s*```json\n(.*?)```", readme, re.S).group(1)
    config = json.loads(snippet)["mcpServers"]["memory"]
    token = secrets.token_urlsafe(24)
    with http_server(tmp_path, service, MCP_TOKEN=token) as mcp:
        url = config["url"].replace("http://127.0.0.1:8790/mcp", mcp.url)
        headers = {k: v.replace("the MCP_TOKEN from local.env", token) for k, v in config["headers"].items()}
        assert headers == {"Authorization": f"Bearer {token}"}

        async def main():
            async with httpx2.AsyncClient(headers=headers, timeout=60) as http:
                async with Client(streamable_http_client(url, http_client=http)) as client:
                    return data(await client.call_tool("memory_stats", {}))

        stats = in_thread(main)
    assert stats["consistent"] is True
