"""What a request to the memory holds, read as the contract says: the JSON body (bounded, an
object), the numbers, flags and choices in it or in the query string (read as the Worker's
http.ts reads them: tests/golden/parsing.json), the fusion settings, and who asks. Each bad value
is the contract's 400 or 422, naming the field."""

from __future__ import annotations

import json
import math
import re

from starlette.requests import Request

from ..facts import MAX_FACT_ID, AddResult, InvalidInput, NotFound, StoreError, TooLarge, valid_unicode
from ..review.history import MAX_NOTE, clean_client
from ..recall.ranking import METHODS, PRESETS, Fusion

MAX_BODY = 256 * 1024  # a 32,000-character query of 4-byte characters, JSON-escaped, fits
MAX_LIMIT = 100
MAX_RERANK = 20  # facts a recall embeds again: each is model time


class BadRequest(StoreError):
    code, status = "bad_request", 400


async def read_json(request: Request) -> dict:
    declared = request.headers.get("content-length")
    if declared and declared.isdigit() and int(declared) > MAX_BODY:
        raise TooLarge(f"request body is over {MAX_BODY} bytes")
    body = b""
    async for chunk in request.stream():
        body += chunk
        if len(body) > MAX_BODY:
            raise TooLarge(f"request body is over {MAX_BODY} bytes")
    try:
        data = json.loads(body)
    except (ValueError, UnicodeDecodeError):
        raise BadRequest("request body is not valid JSON") from None
    except RecursionError:  # the parser recurses per level: a few thousand [ is enough
        raise BadRequest("request body is nested too deeply") from None
    if not isinstance(data, dict):
        raise BadRequest("request body must be a JSON object")
    return data


# The numbers a query string (or a JSON string) may hold, as the Worker's http.ts reads them
# (tests/golden/parsing.json): ASCII digits, surrounded by ASCII white space at most ("+5" in a
# URL arrives as " 5"). int() and float() alone would also take "1_000", "١٢" and "nan".
BLANK = " \t\n\r\f\v"
WHOLE = re.compile(r"[+-]?[0-9]+")
DECIMAL = re.compile(r"[+-]?(?:[0-9]+\.?[0-9]*|\.[0-9]+)(?:[eE][+-]?[0-9]+)?")


def number_text(x: float) -> str:
    """A bound as JavaScript writes it (1.0 is "1"), so both memories word a range alike."""
    return str(int(x)) if float(x).is_integer() else repr(float(x))


def int_param(value, name: str, default: int, low: int, high: int) -> int:
    if value is None or value == "":
        return default
    # JSON's 5.0 is a whole number too (JSON Schema's "integer"; the Worker's JSON.parse cannot tell them apart).
    if isinstance(value, float) and value.is_integer():
        value = int(value)
    elif isinstance(value, str) and WHOLE.fullmatch(value.strip(BLANK)):
        text = value.strip(BLANK)
        # Its first 31 digits: a number that long is past every bound all the same, and int() of
        # 4,300 digits would raise (a 500 where any other bad number is a 422).
        value = int(("-" if text[0] == "-" else "") + (text.lstrip("+-").lstrip("0")[:31] or "0"))
    if isinstance(value, bool) or not isinstance(value, int):
        raise InvalidInput(f"{name} must be a whole number")
    if not low <= value <= high:
        raise InvalidInput(f"{name} must be between {low} and {high}")
    return value


def float_param(value, name: str, default: float, low: float, high: float) -> float:
    if value is None or value == "":
        return default
    if isinstance(value, str) and DECIMAL.fullmatch(value.strip(BLANK)):
        value = float(value.strip(BLANK))
    if isinstance(value, bool) or not isinstance(value, (int, float)):
        raise InvalidInput(f"{name} must be a number")
    try:
        x = float(value)
    except OverflowError:  # a whole number past a float's range
        raise InvalidInput(f"{name} must be a number") from None
    if not math.isfinite(x):  # 1e999 and JSON's 1e400 are infinite: no number to compare
        raise InvalidInput(f"{name} must be a number")
    if not low <= x <= high:
        raise InvalidInput(f"{name} must be between {number_text(low)} and {number_text(high)}")
    return x


def optional_str(data: dict, name: str) -> str | None:
    value = data.get(name)
    if value is not None and not isinstance(value, str):
        raise InvalidInput(f"{name} must be a string")
    return value or None


def fusion_param(data: dict, default: Fusion) -> Fusion:
    """The request's fusion settings: a preset ("default" or "seed") and/or single settings."""
    raw = data.get("fusion")
    if raw is None:
        return default
    if not isinstance(raw, dict):
        raise InvalidInput("fusion must be an object")
    unknown = set(raw) - {"preset", "k", "depth", "kw_weight", "vec_weight", "phrases", "method", "alias_self", "expand", "rerank"}
    if unknown:
        # backslashreplace: a name with a lone surrogate in the message would make the response fail
        names = ", ".join(sorted(unknown)).encode("utf-8", "backslashreplace").decode()
        raise InvalidInput(f"unknown fusion settings: {names}")
    if "preset" in raw:
        default = PRESETS[choice_param(raw["preset"], "fusion.preset", "default", tuple(PRESETS))]
    return Fusion(
        k=int_param(raw.get("k"), "fusion.k", default.k, 0, 1000),
        depth=int_param(raw.get("depth"), "fusion.depth", default.depth, 1, 1000),
        kw_weight=float_param(raw.get("kw_weight"), "fusion.kw_weight", default.kw_weight, 0, 10),
        vec_weight=float_param(raw.get("vec_weight"), "fusion.vec_weight", default.vec_weight, 0, 10),
        phrases=bool_param(raw.get("phrases"), "fusion.phrases", default.phrases),
        method=choice_param(raw.get("method"), "fusion.method", default.method, METHODS),
        alias_self=bool_param(raw.get("alias_self"), "fusion.alias_self", default.alias_self),
        expand=float_param(raw.get("expand"), "fusion.expand", default.expand, 0, 1),
        rerank=int_param(raw.get("rerank"), "fusion.rerank", default.rerank, 0, MAX_RERANK),
    )


def query_bool(value: str | None, name: str) -> bool:
    """A query string's true/false (absent: false)."""
    if value in (None, "", "false", "0"):
        return False
    if value in ("true", "1"):
        return True
    raise InvalidInput(f"{name} must be true or false")


def bool_param(value, name: str, default: bool) -> bool:
    if value is None:
        return default
    if not isinstance(value, bool):
        raise InvalidInput(f"{name} must be true or false")
    return value


def choice_param(value, name: str, default: str, choices: tuple[str, ...]) -> str:
    if value is None:
        return default
    if value not in choices:
        raise InvalidInput(f"{name} must be one of {', '.join(choices)}")
    return value


def fact_id(request: Request) -> int:
    fid = request.path_params["id"]
    if fid >= 2**63:  # past SQLite's integers: no such fact
        raise NotFound(f"no fact with id {fid}")
    return fid


def note_of(request: Request) -> str:
    """`note`: why, in the history (the dashboard's "merged into #7"), at most 200 characters."""
    note = request.query_params.get("note") or ""
    if len(note) > MAX_NOTE:
        raise InvalidInput(f"note is longer than {MAX_NOTE} characters")
    return valid_unicode(note, "note")


def id_list(value: str | None) -> list[int] | None:
    """`ids`: up to 100 fact ids, comma-separated."""
    if value is None:
        return None
    parts = value.split(",")
    if len(parts) > MAX_LIMIT:
        raise InvalidInput(f"ids holds at most {MAX_LIMIT} ids")
    return [int_param(part, "ids", 0, 1, MAX_FACT_ID) for part in parts]


def client_of(request: Request) -> str:
    """Who asks (X-Memory-Client), for the history and the recall log."""
    return clean_client(request.headers.get("x-memory-client"))


def entry_id(request: Request) -> int:
    eid = request.path_params["id"]
    if eid >= 2**53:
        raise NotFound(f"no entry with id {eid}")
    return eid


def added(result: AddResult) -> dict:
    """What POST /facts (and each item of /facts/batch) answers: the new fact, or the one it duplicates."""
    if result.created:
        return {"id": result.fact.id, "created": True, "fact": result.fact.to_dict(), "conflicts": list(result.conflicts),
                **({"pending": True} if result.pending else {})}
    return {"id": result.fact.id, "created": False, "duplicate": {"match": result.match, "score": result.score},
            "fact": result.fact.to_dict()}
