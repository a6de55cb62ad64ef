"""What a client sends never gets a 5xx: hostile but small requests get the contract's 400 or 422,
with a message that says what is wrong. Against the real service and model (test_fuzz looks for
more of these at random)."""

import base64
import json

import pytest


@pytest.fixture(scope="module")
def service(either_service):
    """Both memories: the local service and the Worker's Durable Object."""
    return either_service


@pytest.fixture(scope="module")
def fid(service):
    with service.client() as api:
        return api.post("/facts", json={"text": "Priya is the owner's sister.", "source": "chat"}).json()["id"]


def send(api, method: str, path: str, body: dict | bytes):
    # json.dumps writes a lone surrogate as the escape \ud800, as a JavaScript client would.
    return api.request(method, path, content=body if isinstance(body, bytes) else json.dumps(body).encode(),
                       headers={"Content-Type": "application/json"})


def assert_error(r, status: int, code: str, words: str) -> None:
    assert r.status_code == status, r.text
    assert r.json()["error"]["code"] == code and words in r.json()["error"]["message"], r.text


@pytest.mark.parametrize("method,path", [
    ("POST", "/facts"), ("POST", "/facts/batch"), ("PATCH", "/facts/{id}"), ("POST", "/recall"), ("POST", "/explain"),
])
def test_json_nested_thousands_of_levels_deep_gets_400(api, fid, method, path):
    body = b'{"text": ' + b"[" * 5000 + b"]" * 5000 + b"}"
    assert_error(send(api, method, path.format(id=fid), body), 400, "bad_request", "nested too deeply")


@pytest.mark.parametrize("method,path,body,name", [
    ("POST", "/facts", {"text": "Lone \ud800 surrogate."}, "text"),
    ("POST", "/facts", {"text": "A fine text.", "source": "chat \udc00"}, "source"),
    ("POST", "/facts/batch", {"facts": [{"text": "A fine text."}, {"text": "\ud800"}]}, "text"),
    ("PATCH", "/facts/{id}", {"text": "Lone \ud800 surrogate."}, "text"),
    ("PATCH", "/facts/{id}", {"source": "\ud800"}, "source"),
    ("POST", "/recall", {"query": "Who is \ud800?"}, "query"),
    ("POST", "/explain", {"query": "Who is \ud800?"}, "query"),
])
def test_a_lone_surrogate_is_invalid_unicode_not_a_model_failure(api, fid, method, path, body, name):
    if path == "/explain":
        body = {**body, "id": fid}
    r = send(api, method, path.format(id=fid), body)
    assert_error(r, 422, "invalid", f"{name} contains a lone surrogate")
    assert api.get(f"/facts/{fid}").json()["text"] == "Priya is the owner's sister."


def test_an_unknown_fusion_setting_named_by_a_lone_surrogate_gets_422(api):
    r = send(api, "POST", "/recall", {"query": "sister", "fusion": {"\ud800": 1}})
    assert_error(r, 422, "invalid", "unknown fusion settings: \\ud800")


def test_a_number_past_a_float_gets_422(api):
    r = send(api, "POST", "/recall", {"query": "sister", "fusion": {"kw_weight": 10**400}})
    assert_error(r, 422, "invalid", "fusion.kw_weight must be a number")


def test_a_cursor_with_an_id_past_sqlite_integers_gets_422(api):
    cursor = base64.urlsafe_b64encode(b"2026-01-01T00:00:00.000000Z|" + b"9" * 30).decode()
    assert_error(api.get("/facts", params={"cursor": cursor}), 422, "invalid", "cursor is not one this service gave out")


def test_a_substring_filter_longer_than_any_fact_gets_422(api):
    assert_error(api.get("/facts", params={"q": "a" * 60_000}), 422, "invalid", "the limit is 8000")
    # The cap is no lower than a fact: a whole 8,000-character fact finds itself.
    text = ("Ünïcode and 100% under_scores. " * 300)[:7999] + "!"
    fid = api.post("/facts", json={"text": text}).json()["id"]
    assert [f["id"] for f in api.get("/facts", params={"q": text}).json()["facts"]] == [fid]


@pytest.mark.parametrize("method,path,body,name", [
    ("POST", "/recall", {"query": "x", "log": "false"}, "log"),
    ("PUT", "/settings", {"fusion": {"kw_weight": 1e999}}, "fusion.kw_weight"),
    ("PUT", "/settings", {"fusion": {"depth": -1}}, "fusion.depth"),
    ("PUT", "/settings", {"fusion": {"\ud800": 1}}, "unknown fusion settings"),
    ("PUT", "/settings", {"fusion": {}, "extra": True}, "extra"),
])
def test_bad_v3_values_get_422_naming_the_field(api, method, path, body, name):
    assert_error(send(api, method, path, body), 422, "invalid", name)


@pytest.mark.parametrize("path", ["/history", "/recalls"])
@pytest.mark.parametrize("cursor", ["abc", "-1", "0", "9" * 5000, "1.5", "١٢"])
def test_a_bad_history_or_recall_log_cursor_gets_422(api, path, cursor):
    assert_error(api.get(path, params={"cursor": cursor}), 422, "invalid", "cursor")


@pytest.mark.parametrize("header", [b"a" * 65, b"tab\there", b"bell\x07", "caf\u00e9".encode()])
def test_a_bad_client_header_gets_422_on_a_write(api, header):
    r = api.post("/facts", json={"text": "Never stored."}, headers={"X-Memory-Client": header})
    assert_error(r, 422, "invalid", "X-Memory-Client")
