"""The golden parsing cases both memories answer alike (tests/golden/parsing.json): times,
cursors, whole-number and decimal parameters and fact ids. This checks memories/ against the
file; worker/test/parsing.test.ts checks the Worker against the same file. The file is the
contract, written by hand: change it, and then both sides, on purpose."""

import base64
import json
from pathlib import Path

import pytest

from memories.facts import ORDERS, Fact, InvalidInput, clean_id, clean_time, decode_cursor, encode_cursor
from memories.serving.requests import float_param, int_param

GOLDEN = json.loads((Path(__file__).parent / "golden" / "parsing.json").read_text(encoding="utf-8"))


def shown(value) -> str:
    text = json.dumps(value, ensure_ascii=False)
    return text if len(text) <= 40 else f"{text[:30]}…({len(text)} chars)"


def outcome(call) -> dict:
    """What a parser answered: {"ok": value} or {"error": message}; any other exception is a
    failure of the test (it would be a 500)."""
    try:
        return {"ok": call()}
    except InvalidInput as e:
        return {"error": str(e)}


def wanted(case: dict, key: str) -> dict:
    return {"error": case["error"]} if "error" in case else {"ok": case[key]}


@pytest.mark.parametrize("case", GOLDEN["times"], ids=lambda c: shown(c["input"]))
def test_time(case):
    assert outcome(lambda: clean_time(case["input"], "created_at")) == wanted(case, "stored")


def cursor_case(case: dict) -> str:
    return shown(case.get("text", case["cursor"])) + (f" order={case['order']}" if "order" in case else "")


@pytest.mark.parametrize("case", GOLDEN["cursors"], ids=cursor_case)
def test_cursor(case):
    if "text" in case:  # what the case says it holds is what it holds
        assert base64.urlsafe_b64encode(case["text"].encode()).decode() == case["cursor"]
    got = outcome(lambda: list(decode_cursor(case["cursor"], case.get("order", "created"))))
    assert got == wanted(case, "decoded")
    if "decoded" in case:
        assert type(got["ok"][1]) is int


@pytest.mark.parametrize("order", ORDERS)
def test_a_cursor_given_out_in_each_order_reads_back_in_that_order_alone(order):
    fact = Fact(7, "x", "fact", "", "2024-03-05T10:00:00.000000Z", "2024-03-06T10:00:00.000000Z")
    cursor = encode_cursor(fact, order)
    key = {"created_at": fact.created_at, "updated_at": fact.updated_at, "id": ""}[ORDERS[order][0]]
    assert decode_cursor(cursor, order) == (key, 7)
    for other in set(ORDERS) - {order}:
        with pytest.raises(InvalidInput, match=f"order={order}, not order={other}"):
            decode_cursor(cursor, other)


def param_case(case: dict) -> str:
    return f"{case['name']}={shown(case['value'])}"


@pytest.mark.parametrize("case", GOLDEN["int_params"], ids=param_case)
def test_whole_number_parameter(case):
    got = outcome(lambda: int_param(case["value"], case["name"], case["default"], case["low"], case["high"]))
    assert got == wanted(case, "parsed")
    if "parsed" in case:
        assert type(got["ok"]) is int


@pytest.mark.parametrize("case", GOLDEN["float_params"], ids=param_case)
def test_decimal_parameter(case):
    got = outcome(lambda: float_param(case["value"], case["name"], case["default"], case["low"], case["high"]))
    assert got == wanted(case, "parsed")


@pytest.mark.parametrize("case", GOLDEN["ids"], ids=lambda c: shown(c["value"]))
def test_fact_id(case):
    got = outcome(lambda: clean_id(case["value"]))
    assert got == wanted(case, "id")
    if case.get("id") is not None:
        assert type(got["ok"]) is int


def test_the_golden_file_covers_the_edges_both_sides_once_read_differently():
    times = {c["input"]: c for c in GOLDEN["times"] if isinstance(c["input"], str)}
    assert "stored" in times["2024-02-29T12:00:00Z"] and "error" in times["2023-02-29T10:00:00Z"]
    assert "error" in times["2024-02-30T10:00:00Z"] and "error" in times["2024-03-05T24:00:00Z"]
    assert "error" in times["2024-W05-1T10:00:00Z"] and "error" in times["2024-03-05T10:00:00.123456789Z"]
    assert times["2024-03-05T10:00:00+05:30"]["stored"] == times["2024-03-05T10:00:00+0530"]["stored"]
    assert "stored" in times["2024-03-05t10:00:00z"] and "error" in times[""]
    limits = {c["value"]: c for c in GOLDEN["int_params"] if isinstance(c["value"], str) and c["name"] == "limit"}
    assert all(v in limits for v in ["1.0", "1e3", "0x10", "١٢", "+5", " 5", "9" * 5000])
    cursors = [c for c in GOLDEN["cursors"] if "decoded" in c]
    assert {c.get("order", "created") for c in cursors} == set(ORDERS)
    ids = [c["value"] for c in GOLDEN["ids"] if "error" in c]
    assert 2**53 in ids and 2**63 - 1 in ids
