"""The HTTP contract (docs/memory-api.md) against both memories: the local service and the Worker's
Durable Object, each with the real model over real HTTP."""

import re
import uuid

import httpx
import pytest

from memories.serving.openapi import openapi_document
from memories.serving.service import create_app
from memories.store import Memory



@pytest.fixture(scope="module")
def service(either_service):
    """Every test here runs against the local service and against the Worker."""
    return either_service


ISO = re.compile(r"^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}(\.\d+)?Z$")


def add(api, text, **kw):
    r = api.post("/facts", json={"text": text, **kw})
    assert r.status_code in (200, 201), r.text
    return r.json()


def assert_error(r, status, code=None):
    assert r.status_code == status, r.text
    body = r.json()["error"]
    assert body["message"] and isinstance(body["message"], str)
    if code:
        assert body["code"] == code


def test_health_with_the_secret_names_the_model_and_the_count(service, api):
    r = api.get("/health")
    body = r.json()
    assert r.status_code == 200 and body["ok"] is True
    assert body["model"] == "all-MiniLM-L6-v2-onnx-int8" and body["dims"] == 384 and body["mode"] == "hybrid"
    assert isinstance(body["facts"], int)


def test_health_without_the_secret_says_only_that_it_is_up(service):
    r = httpx.get(service.url + "/health")
    assert r.status_code == 200 and r.json() == {"ok": True}


@pytest.mark.parametrize("method,path", [
    ("GET", "/facts"), ("POST", "/facts"), ("GET", "/facts/1"), ("PATCH", "/facts/1"), ("DELETE", "/facts/1"),
    ("POST", "/recall"), ("GET", "/duplicates"), ("GET", "/stats"), ("POST", "/reindex"), ("POST", "/explain"),
    ("GET", "/facts/1/neighbours"), ("GET", "/duplicates/nearest"), ("GET", "/no-such-route"),
])
@pytest.mark.parametrize("secret", [None, "wrong", ""])
def test_every_route_but_health_needs_the_secret(service, method, path, secret):
    headers = {} if secret is None else {"X-Memory-Secret": secret}
    r = httpx.request(method, service.url + path, headers=headers, json={"text": "x", "query": "x", "id": 1})
    assert_error(r, 401, "unauthorized")
    assert service.secret not in r.text


def test_add_then_get_a_fact(api):
    body = add(api, "  Priya is the owner's sister.  ", type="fact", source="chat")
    assert body["created"] is True
    fact = body["fact"]
    assert fact["text"] == "Priya is the owner's sister." and fact["source"] == "chat" and fact["type"] == "fact"
    assert ISO.match(fact["created_at"]) and ISO.match(fact["updated_at"])
    r = api.get(f"/facts/{body['id']}")
    assert r.status_code == 200 and r.json() == fact


def test_add_returns_201_for_new_and_200_naming_the_duplicate(api):
    r = api.post("/facts", json={"text": "The owner drinks black coffee."})
    assert r.status_code == 201
    again = api.post("/facts", json={"text": "the owner drinks BLACK coffee."})
    assert again.status_code == 200
    body = again.json()
    assert body["created"] is False and body["id"] == r.json()["id"]
    assert body["duplicate"] == {"match": "exact", "score": 1.0}
    near = api.post("/facts", json={"text": "The owner drinks the black coffee."}).json()
    assert near["created"] is False and near["duplicate"]["match"] == "near" and near["duplicate"]["score"] >= 0.97


def test_exact_dedup_folds_case_as_python_does_on_both_memories(api):
    """Casefold, not lower case: "ß" is "ss", "Σ" is "σ" wherever it stands."""
    first = api.post("/facts", json={"text": "Kai lives on Hauptstraße in ΑΘΗΝΑΣ."}).json()
    again = api.post("/facts", json={"text": "\x1cKAI LIVES ON HAUPTSTRASSE IN αθηνασ.\x1f"}).json()
    assert again["created"] is False and again["id"] == first["id"] and again["duplicate"]["match"] == "exact"


@pytest.mark.parametrize("payload,status", [
    ({"text": ""}, 422), ({"text": "   "}, 422), ({}, 422), ({"text": 5}, 422),
    ({"text": "ok", "type": "opinion"}, 422), ({"text": "ok", "source": 3}, 422),
    ({"text": "x" * 8001}, 413),
])
def test_bad_facts_are_refused_clearly(api, payload, status):
    before = api.get("/stats").json()["facts"]
    assert_error(api.post("/facts", json=payload), status)
    assert api.get("/stats").json()["facts"] == before


def test_text_of_exactly_8000_characters_is_accepted(api):
    assert api.post("/facts", json={"text": "y" * 8000}).status_code == 201


@pytest.mark.parametrize("body", [b"not json", b"[1, 2]", b"\xff\xfe", b""])
def test_malformed_bodies_get_400(api, body):
    assert_error(api.post("/facts", content=body, headers={"Content-Type": "application/json"}), 400, "bad_request")


def test_an_oversized_body_gets_413(api):
    assert_error(api.post("/recall", content=b'{"query": "' + b"a" * 300_000 + b'"}'), 413)


def test_unknown_ids_get_404(api):
    for r in (api.get("/facts/999999"), api.patch("/facts/999999", json={"text": "x"}), api.delete("/facts/999999"),
              api.get("/facts/999999/neighbours"), api.post("/explain", json={"query": "x", "id": 999999})):
        assert_error(r, 404, "not_found")
    assert_error(api.get("/facts/abc"), 404)


def test_patch_edits_and_reindexes(api):
    fid = add(api, "Leo swims on Wednesdays.")["id"]
    r = api.patch(f"/facts/{fid}", json={"text": "Leo plays chess on Fridays.", "source": "calendar"})
    assert r.status_code == 200
    assert r.json()["text"] == "Leo plays chess on Fridays." and r.json()["source"] == "calendar"
    hits = api.post("/recall", json={"query": "chess", "debug": True}).json()
    assert hits["kw"][0]["fact"]["id"] == fid
    assert all(h["fact"]["id"] != fid for h in api.post("/recall", json={"query": "swims", "debug": True}).json()["kw"])


def test_patch_that_duplicates_gets_409_naming_the_other(api):
    a = add(api, "Tomas lives in Berlin.")["id"]
    b = add(api, "Ines lives in Porto.")["id"]
    r = api.patch(f"/facts/{b}", json={"text": "tomas lives in berlin."})
    assert_error(r, 409, "duplicate")
    assert r.json()["error"]["existing"]["id"] == a and str(a) in r.json()["error"]["message"]
    assert api.get(f"/facts/{b}").json()["text"] == "Ines lives in Porto."


def test_delete_removes_the_fact_from_every_list(api):
    fid = add(api, "The owner's cat is called Pixel.")["id"]
    assert api.delete(f"/facts/{fid}").json()["deleted"] == fid
    assert_error(api.get(f"/facts/{fid}"), 404)
    recall = api.post("/recall", json={"query": "cat Pixel", "debug": True, "limit": 100}).json()
    ids = {h["fact"]["id"] for h in recall["kw"] + recall["vec"] + recall["results"]}
    assert fid not in ids
    stats = api.get("/stats").json()
    assert stats["consistent"] and not any(stats["orphans"].values())
    assert stats["facts"] == stats["fts"] == stats["vectors"]


def test_list_facts_pages_newest_first(api):
    animals = ["zebras graze", "lions sleep all day", "owls hunt at night", "penguins cannot fly", "bees make honey"]
    for animal in animals:
        add(api, f"On the safari we saw that {animal}.", source="paging")
    first = api.get("/facts", params={"source": "paging", "limit": 2}).json()
    assert first["total"] == 5 and len(first["facts"]) == 2 and first["next_cursor"]
    assert first["facts"][0]["text"] == "On the safari we saw that bees make honey."
    texts = [f["text"] for f in first["facts"]]
    cursor = first["next_cursor"]
    while cursor:
        page = api.get("/facts", params={"source": "paging", "limit": 2, "cursor": cursor}).json()
        texts += [f["text"] for f in page["facts"]]
        cursor = page["next_cursor"]
    assert texts == [f"On the safari we saw that {a}." for a in reversed(animals)]
    assert api.get("/facts", params={"q": "SAFARI", "source": "paging"}).json()["total"] == 5
    assert_error(api.get("/facts", params={"limit": 101}), 422)
    assert_error(api.get("/facts", params={"limit": "ten"}), 422)
    assert_error(api.get("/facts", params={"limit": "1_0"}), 422)  # Python's int() would take it
    assert_error(api.get("/facts", params={"limit": "１０"}), 422)  # full-width digits, likewise
    assert_error(api.get("/facts", params={"type": "opinion"}), 422)
    assert_error(api.get("/facts", params={"cursor": "nope"}), 422)


def test_list_facts_pages_each_order_with_ties_broken_by_id(api):
    # (created, updated) days of January to March 2024; ids go a < b < c < d < e.
    days = {"a": ("01-01", "03-01"), "b": ("01-02", "01-02"), "c": ("01-02", "03-01"), "d": ("01-03", "02-01"),
            "e": ("01-01", "01-05")}
    texts = {"a": "Marta keeps bees on the roof.", "b": "The boiler was serviced in winter.",
             "c": "Jonas prefers tea to coffee.", "d": "The library card expires in May.", "e": "Our router password is on the fridge."}
    r = api.post("/facts/batch", json={"facts": [
        {"text": texts[k], "source": "ordering", "created_at": f"2024-{c}T09:00:00Z", "updated_at": f"2024-{u}T09:00:00Z"}
        for k, (c, u) in days.items()]})
    assert r.status_code == 200 and all(x["created"] for x in r.json()["results"]), r.text
    name = {x["fact"]["id"]: k for x, k in zip(r.json()["results"], days)}

    def pages(order, limit=2):
        listed, cursors, cursor = [], [], None
        while True:
            params = {"source": "ordering", "order": order, "limit": limit, **({"cursor": cursor} if cursor else {})}
            body = api.get("/facts", params=params).json()
            assert body["total"] == 5
            listed += [name[f["id"]] for f in body["facts"]]
            cursor = body["next_cursor"]
            if not cursor:
                return "".join(listed), cursors
            cursors.append(cursor)

    wanted = {"created": "dcbea", "updated": "cadeb", "id": "edcba"}
    cursors = {}
    for order, letters in wanted.items():
        for way, expected in ((order, letters), (f"{order}_asc", letters[::-1])):
            listed, cursors[way] = pages(way)
            assert listed == expected, way
            assert pages(way, limit=1)[0] == expected and pages(way, limit=5)[0] == expected
    assert api.get("/facts", params={"source": "ordering"}).json()["facts"][0]["id"] == next(i for i in name if name[i] == "d")
    # A cursor made before orders (no order) still pages the default order.
    assert [f["id"] for f in api.get("/facts", params={"source": "ordering", "cursor": cursors["created"][0]}).json()["facts"]] \
        == [i for k in "bea" for i in name if name[i] == k]
    for made, cursor_list in cursors.items():
        for other in set(cursors) - {made}:
            r = api.get("/facts", params={"source": "ordering", "order": other, "cursor": cursor_list[0]})
            assert_error(r, 422, "invalid")
            assert f"order={made}, not order={other}" in r.json()["error"]["message"]
        r = api.get("/facts", params={"source": "ordering", "cursor": cursor_list[0]})
        assert r.status_code == 200 if made == "created" else r.status_code == 422, (made, r.text)
    for bad in ("newest", "CREATED", "-created", "created ", "id,updated"):
        r = api.get("/facts", params={"order": bad})
        assert_error(r, 422, "invalid")
        assert r.json()["error"]["message"].startswith("order must be one of created, updated, id, created_asc")
    # An edit is the newest change: first by updated, where it was by created.
    b = next(i for i in name if name[i] == "b")
    assert api.patch(f"/facts/{b}", json={"source": "ordering", "text": texts["b"] + " Again."}).status_code == 200
    assert pages("updated")[0] == "bcade" and pages("created")[0] == "dcbea"


def test_recall_reranks_its_top_without_the_words_the_top_shares(api):
    for text in ("Ines Okafor works as a glazier.", "Ines Okafor is Freya Okafor's sister.", "Ines Okafor reports to Ulla Berg."):
        add(api, text)
    body = api.post("/recall", json={"query": "who is ines okafor's boss", "debug": True}).json()
    assert body["fusion"]["rerank"] == 5
    assert body["rerank"]["shared"] == ["ines", "okafor"] and body["rerank"]["query"] == "who is  's boss"
    reranked = {f["id"]: f for f in body["rerank"]["facts"]}
    assert reranked and all(f["text"] and "Okafor" not in f["text"] for f in reranked.values())
    for hit in body["results"]:
        assert hit["score"] == pytest.approx(hit["parts"]["kw"] + hit["parts"]["vec"] + hit["parts"]["rerank"])
        assert (hit["parts"]["rerank"] != 0) == (hit["fact"]["id"] in reranked)
    best = max(f["cosine"] for f in reranked.values())
    assert max(h["parts"]["rerank"] for h in body["results"]) == pytest.approx(0.5)
    assert all(h["parts"]["rerank"] == pytest.approx(0.5 * reranked[h["fact"]["id"]]["cosine"] / best)
               for h in body["results"] if h["fact"]["id"] in reranked)
    why = api.post("/explain", json={"query": "who is ines okafor's boss", "id": body["results"][0]["fact"]["id"]}).json()
    assert why["fused_rank"] == 1 and why["rerank_contribution"] == pytest.approx(body["results"][0]["parts"]["rerank"])
    off = api.post("/recall", json={"query": "who is ines okafor's boss", "debug": True, "fusion": {"rerank": 0}}).json()
    assert off["rerank"] is None and all(h["parts"]["rerank"] == 0 for h in off["results"])
    assert api.post("/recall", json={"query": "who is ines okafor's boss", "debug": True, "mode": "vector"}).json()["rerank"] is None
    assert_error(api.post("/recall", json={"query": "x", "fusion": {"rerank": 21}}), 422)


def test_a_query_term_brings_in_the_memorys_own_close_words(api):
    married = add(api, "Cosima Hartwig is married to Tobias Varga.")["id"]
    for text in ("Cosima Hartwig works at Corvid Analytics.", "Cosima Hartwig lives in Graz.",
                 "Cosima Hartwig was born in 1984.", "Tobias Varga is a welder by trade."):
        add(api, text)
    body = api.post("/recall", json={"query": "who is cosima's spouse", "debug": True}).json()
    assert {"word": "married", "term": "spouse"} in [{k: e[k] for k in ("word", "term")} for e in body["expansions"]]
    assert all(e["cosine"] >= 0.65 for e in body["expansions"])
    assert '"married"' in body["match"]
    assert any(t["term"] == "married" and t.get("from") == "spouse" and t["facts"] == 1 for t in body["terms"])
    top = body["results"][0]
    assert top["fact"]["id"] == married and top["kw_rank"] == 1
    why = api.post("/explain", json={"query": "who is cosima's spouse", "id": married}).json()
    assert why["expansions"] == body["expansions"] and why["fused_rank"] == 1 and why["score"] == pytest.approx(top["score"])
    assert api.post("/explain", json={"query": "who is cosima's spouse", "id": float(married)}).json() == why
    off = api.post("/recall", json={"query": "who is cosima's spouse", "debug": True, "fusion": {"expand": 0}}).json()
    assert off["expansions"] == [] and "married" not in off["match"]
    assert_error(api.post("/recall", json={"query": "x", "fusion": {"expand": 2}}), 422)


def test_recall_tags_hits_and_returns_debug_lists(api):
    sister = add(api, "Anna's sister is Lena.")["id"]
    r = api.post("/recall", json={"query": "Who is Anna's sister?", "debug": True, "fusion": {"preset": "seed"}})
    body = r.json()
    assert r.status_code == 200 and body["mode"] == "hybrid"
    top = body["results"][0]
    assert top["fact"]["id"] == sister and top["via"] == "both" and top["kw_rank"] == 1 and top["vec_rank"] == 1
    assert body["match"] == '"anna" OR "sister"'
    assert body["fusion"] == {"k": 60, "depth": 30, "kw_weight": 1.0, "vec_weight": 1.0, "phrases": False,
                              "method": "rrf", "alias_self": False, "expand": 0.0, "rerank": 0}
    assert {"fact", "rank", "bm25"} <= set(body["kw"][0]) and {"fact", "rank", "cosine"} <= set(body["vec"][0])
    for hit in body["results"]:
        expected = sum(1 / (60 + r) for r in (hit["kw_rank"], hit["vec_rank"]) if r)
        assert hit["score"] == pytest.approx(expected)
        assert hit["via"] == {(True, True): "both", (True, False): "kw", (False, True): "vec"}[
            (hit["kw_rank"] is not None, hit["vec_rank"] is not None)]
    assert "kw" not in api.post("/recall", json={"query": "Anna"}).json()
    assert body["information"] is None and body["terms"] == []  # rank fusion needs no term counts


def test_the_default_weighs_the_keyword_list_by_its_terms_information(api):
    # Made-up words, so other tests' facts in this memory hold none of them.
    for text in ("Vantor keeps the boat.", "Vantor walks to Quillet's bakery.", "The vantor sings at night."):
        add(api, text)
    body = api.post("/recall", json={"query": "vantor quillet", "debug": True}).json()
    assert [(t["term"], t["facts"]) for t in body["terms"]] == [("vantor", 3), ("quillet", 1)]
    assert body["terms"][0]["idf"] < body["terms"][1]["idf"]
    assert body["information"] == pytest.approx(body["terms"][0]["idf"] + body["terms"][1]["idf"])
    top = body["results"][0]
    assert top["fact"]["text"] == "Vantor walks to Quillet's bakery."
    assert top["parts"]["kw"] == pytest.approx(-top["bm25"] / body["information"])


def test_recall_limit_type_and_fusion_settings(api):
    add(api, "Book tables for 7 pm.", type="skill")
    body = api.post("/recall", json={"query": "tables", "type": "skill", "limit": 1}).json()
    assert len(body["results"]) == 1 and body["results"][0]["fact"]["type"] == "skill"
    # 1.0 is a whole number in JSON (JSON Schema's "integer"): both memories take it, not 1.5.
    assert len(api.post("/recall", json={"query": "tables", "limit": 1.0}).json()["results"]) == 1
    assert_error(api.post("/recall", json={"query": "tables", "limit": 1.5}), 422)
    body = api.post("/recall", json={"query": "tables", "debug": True,
                                     "fusion": {"preset": "seed", "k": 10, "depth": 5}}).json()
    assert body["fusion"]["k"] == 10 and len(body["vec"]) <= 5
    assert body["results"][0]["score"] >= 1 / 11
    for bad in ({"query": ""}, {"query": "x", "limit": 0}, {"query": "x", "limit": 101}, {"query": "x", "type": "y"},
                {"query": "x", "debug": "yes"}, {"query": 3}, {"query": "x", "fusion": {"k": -1}},
                {"query": "x", "fusion": {"nope": 1}}, {"query": "x", "fusion": {"kw_weight": "NaN"}},
                {"query": "x", "fusion": {"preset": "best"}}, {"query": "x", "fusion": {"method": "magic"}}):
        assert_error(api.post("/recall", json=bad), 422)


@pytest.mark.parametrize("query", ['"', "*", "NEAR", ":", "-", "(", ")", 'NEAR("a" "b", 2)', "col:term", "🙂🙂",
                                   "a AND OR NOT b", "x" * 10_240])
def test_recall_accepts_any_query_text(api, query):
    r = api.post("/recall", json={"query": query, "debug": True})
    assert r.status_code == 200, r.text
    assert isinstance(r.json()["kw"], list)


def test_duplicates_and_nearest(api):
    a = add(api, "The owner's passport expires in 2028.")["id"]
    b = add(api, "Owner passport expiry: 2028.")["id"]
    pairs = api.get("/duplicates", params={"threshold": 0.85}).json()["pairs"]
    ids = [{p["a"]["id"], p["b"]["id"]} for p in pairs]
    assert {a, b} in ids
    scores = [p["score"] for p in pairs]
    assert scores == sorted(scores, reverse=True) and all(s >= 0.85 for s in scores)
    assert all(p["a"]["type"] == p["b"]["type"] for p in pairs)
    assert_error(api.get("/duplicates", params={"threshold": 2}), 422)
    nearest = {n["id"]: n["score"] for n in api.get("/duplicates/nearest").json()["nearest"]}
    assert nearest[a] >= 0.85


def test_neighbours_and_explain(api):
    a = add(api, "Mara works as a nurse.")["id"]
    near = api.get(f"/facts/{a}/neighbours", params={"limit": 3}).json()["neighbours"]
    assert len(near) <= 3 and all(n["fact"]["id"] != a for n in near)
    why = api.post("/explain", json={"query": "What does Mara do for work?", "id": a}).json()
    assert "mara" in why["matched_terms"] and why["kw_rank"] >= 1 and why["vec_rank"] >= 1
    assert why["score"] == pytest.approx(why["kw_contribution"] + why["vec_contribution"])
    assert why["information"] > 0  # the default weighs BM25 by the query terms' information
    recalled = api.post("/recall", json={"query": "What does Mara do for work?", "limit": 100}).json()["results"]
    assert recalled[why["fused_rank"] - 1]["fact"]["id"] == a
    assert recalled[why["fused_rank"] - 1]["score"] == pytest.approx(why["score"])


def test_stats_and_reindex(api):
    before = api.get("/stats").json()
    r = api.post("/reindex")
    assert r.status_code == 200 and r.json()["vectors"] == before["facts"]
    after = api.get("/stats").json()
    assert after["consistent"] and after["facts"] == before["facts"]


def test_unknown_route_and_method_are_json_errors(api):
    assert_error(api.get("/nope"), 404)
    assert_error(api.put("/facts/1", json={}), 405)


def test_openapi_document_lists_exactly_the_routes_served(service, tmp_path):
    served = httpx.get(service.url + "/openapi.json").json()
    assert served == openapi_document()
    documented = {(path, method.upper()) for path, item in served["paths"].items() for method in item
                  if method in ("get", "post", "patch", "delete", "put")}
    app = create_app(Memory(tmp_path / "m.db", None), "s")
    while not hasattr(app, "routes"):  # inside the middleware
        app = app.app
    routed = {(route.path.replace(":int", ""), method) for route in app.routes
              for method in route.methods - {"HEAD"}}
    assert documented == routed and len(routed) == 29


def test_a_batch_is_stored_whole_or_not_at_all(api):
    kept = add(api, "Batch anchor: the owner's bike is blue.")["id"]
    before = api.get("/stats").json()["facts"]
    r = api.post("/facts/batch", json={"facts": [{"text": "Batch one: Ada knits."}, {"text": "Batch two.", "id": kept}]})
    assert_error(r, 409, "id_taken")
    assert api.get("/stats").json()["facts"] == before
    r = api.post("/facts/batch", json={"facts": [
        {"text": "Batch one: Ada knits.", "source": "import"}, {"text": "batch one: ada KNITS."},
        {"text": "Batch three: Ole sails.", "type": "log", "created_at": "2020-01-02T03:04:05.123456Z"},
    ]})
    assert r.status_code == 200, r.text
    first, same, third = r.json()["results"]
    assert first["created"] and not same["created"] and same["id"] == first["id"] and same["duplicate"]["match"] == "exact"
    assert third["fact"]["created_at"] == "2020-01-02T03:04:05.123456Z" and third["fact"]["type"] == "log"
    stats = api.get("/stats").json()
    assert stats["facts"] == before + 2 and stats["consistent"]
    for bad, status in (({"facts": "x"}, 422), ({"facts": [{"text": ""}]}, 422), ({"facts": [{"text": "x"}] * 101}, 413)):
        assert_error(api.post("/facts/batch", json=bad), status)


def test_import_and_export_through_the_url_keep_ids_and_times(service, tmp_path):
    import json
    import os
    import subprocess
    import sys

    facts = [{"id": 5000 + i, "text": f"Moved fact {i}: parcel {i * 7919 % 1000} went to shelf {i}.", "type": "fact",
              "source": "move", "created_at": f"2021-05-{1 + i % 28:02d}T10:00:{i % 60:02d}.000001Z",
              "updated_at": f"2022-05-{1 + i % 28:02d}T10:00:00.000002Z"} for i in range(130)]
    src = tmp_path / "in.jsonl"
    src.write_text("".join(json.dumps(f) + "\n" for f in facts))
    env = {**os.environ, "MEMORY_SECRET": service.secret}
    run = lambda *args: subprocess.run([sys.executable, "-m", "memories", *args, "--url", service.url],  # noqa: E731
                                       env=env, capture_output=True, text=True, timeout=300)
    done = run("import", str(src), "--quiet")
    assert done.returncode == 0, done.stderr
    assert "imported 130 facts" in done.stderr
    out = tmp_path / "out.jsonl"
    assert run("export", "-o", str(out)).returncode == 0
    lines = [json.loads(line) for line in out.read_text().splitlines()]
    exported = {f["id"]: f for f in lines if "text" in f}
    assert all(set(line) == {"conflict"} for line in lines if "text" not in line)  # the pairs its writes proposed, after the facts
    assert all(exported[f["id"]] == f | {"valid_until": None, "superseded_by": None, "reviewed_at": None} for f in facts)
    again = run("import", str(src), "--quiet")  # ids now taken, texts the same: all duplicates
    assert again.returncode == 0 and "imported 0 facts" in again.stderr and "130 were already there" in again.stderr


def test_recall_modes_answer_from_one_list_or_both(api):
    fid = add(api, "The owner's gym locker is number 88.")["id"]
    keyword = api.post("/recall", json={"query": "gym locker", "mode": "keyword", "debug": True}).json()
    assert keyword["mode"] == "keyword" and keyword["vec"] == [] and {h["via"] for h in keyword["results"]} == {"kw"}
    assert keyword["results"][0]["fact"]["id"] == fid
    vector = api.post("/recall", json={"query": "where do I keep my gym things", "mode": "vector", "debug": True}).json()
    assert vector["mode"] == "vector" and vector["kw"] == [] and {h["via"] for h in vector["results"]} == {"vec"}
    assert vector["match"] == "" and fid in [h["fact"]["id"] for h in vector["results"]]
    hybrid = api.post("/recall", json={"query": "gym locker", "debug": True}).json()
    assert hybrid["mode"] == "hybrid" and hybrid["timing"]["rank_ms"] >= 0
    assert_error(api.post("/recall", json={"query": "x", "mode": "psychic"}), 422)


def test_dedup_never_merges_look_alikes_and_still_merges_rewordings(api):
    import json
    from pathlib import Path

    pairs = json.loads((Path(__file__).resolve().parent.parent / "memories" / "data" / "dedup_pairs.json").read_text())
    merged = []
    for a, b in pairs["distinct"]:
        first = add(api, a, source="dedup-distinct")
        second = add(api, b, source="dedup-distinct")
        if not second["created"] and second["id"] == first["id"]:
            merged.append((a, b))
    assert merged == []
    same = add(api, "The owner drinks green tea every morning.")
    again = add(api, "The owner drinks the green tea every morning.")
    assert again["created"] is False and again["id"] == same["id"] and again["duplicate"]["match"] == "near"


def test_the_facts_filter_folds_case_beyond_ascii(api):
    tag = uuid.uuid4().hex[:6]
    api.post("/facts", json={"text": f"The owner's favourite café is Majestic in Porto {tag}.", "source": f"fold-{tag}"})
    api.post("/facts", json={"text": f"Die Straße heißt Rua Augusta {tag}.", "source": f"fold-{tag}"})
    for q, found in (("CAFÉ", 1), ("Café", 1), ("café", 1), ("STRASSE", 1), ("straße", 1), ("cafe", 0)):
        assert api.get("/facts", params={"q": q, "source": f"fold-{tag}"}).json()["total"] == found, q
