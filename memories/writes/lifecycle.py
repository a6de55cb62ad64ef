"""What is true now: which facts are current, what a new fact may replace, and what differs
between two facts. The write path (writing.py) and the read path (searching.py, reading.py) ask
this file; worker/src/writes/lifecycle.ts mirrors it, and tests/golden/lifecycle.json holds both to the
same answers.

A fact is current while its `valid_until` is null or still ahead. Replacing a fact sets its
`superseded_by` and its `valid_until`; expiring one sets `valid_until` alone. Neither deletes
anything: `as_of` recalls what was current then. Nothing is ever replaced without a client asking:
a write only proposes (`conflicts`), and the agent or the owner decides.
"""

from __future__ import annotations

import re

from .dedup import NEGATIONS, calendar, mentions, names, numbers, words
from .same_question import Answer, answers
from ..facts import MAX_FACT_ID, InvalidInput, clean_id, clean_time, now, valid_unicode

# A created fact proposes a current same-type fact as one it may replace when both answer one
# question (same_question.py). The candidates are its closest PROPOSE_CANDIDATES at or above
# PROPOSE (cosine finds the old fact of every seen update there); at most PROPOSE_MOST are
# proposed. Chosen on the seen sets of benchmarks/lifecycle.py; its unseen sets are run once.
PROPOSE = 0.4
PROPOSE_CANDIDATES = 5
PROPOSE_MOST = 3
# A log is an event ("Ran 10 km on Sunday."): a later one does not make it untrue, so logs neither
# propose nor are proposed. (The update sets are facts; the demo's logs proposed each other at 0.51.)
PROPOSING = ("fact", "skill")
MAX_SUPERSEDES = 20
STATUSES = ("all", "current", "replaced", "expired")
RESOLUTIONS = ("replace", "keep_both", "keep_old")
KINDS = ("number", "date", "negation", "name", "word")
# What a word of a text is for the diff: a run of non-space characters with its surrounding
# punctuation taken off ("9:30." is "9:30"), compared case-folded (`same`).
EDGES = ".,;:!?()[]{}\"'\u201c\u201d\u2018\u2019"


def hidden(as_of: str | None, pending: bool = False) -> tuple[str, list]:
    """SQL for the ids that recall leaves out (as a subquery), and its arguments: the facts no
    longer current now, or, `as_of` a time, those not current then (created after it, or whose
    validity ended at or before it); and with `pending` (the memory's review is "before"), the
    facts not reviewed yet."""
    if as_of is None:
        sql, args = "SELECT id FROM facts WHERE valid_until IS NOT NULL AND valid_until <= ?", [now()]
    else:
        sql, args = "SELECT id FROM facts WHERE created_at > ? OR (valid_until IS NOT NULL AND valid_until <= ?)", [as_of, as_of]
    if pending:  # by facts_unreviewed, which holds only those
        sql += " UNION ALL SELECT id FROM facts WHERE reviewed_at IS NULL"
    return sql, args


def status_filter(status: str, as_of: str | None) -> tuple[str, list]:
    """GET /facts's `status` (and `as_of`: the memory as it was then, facts created after it left
    out) as a WHERE clause and its arguments."""
    at = as_of or now()
    where, args = [], []
    if as_of is not None:
        where.append("created_at <= ?")
        args.append(as_of)
    if status == "current":
        where.append("(valid_until IS NULL OR valid_until > ?)")
        args.append(at)
    elif status == "replaced":
        where.append("valid_until <= ? AND superseded_by IS NOT NULL")
        args.append(at)
    elif status == "expired":
        where.append("valid_until <= ? AND superseded_by IS NULL")
        args.append(at)
    return " AND ".join(where), args


def is_current(valid_until: str | None, created_at: str, as_of: str | None = None) -> bool:
    if as_of is None:
        return valid_until is None or valid_until > now()
    return created_at <= as_of and (valid_until is None or valid_until > as_of)


def clean_status(value: object) -> str:
    if value is None or value == "":
        return "all"
    if value not in STATUSES:
        raise InvalidInput(f"status must be one of {', '.join(STATUSES)}")
    return value  # type: ignore[return-value]


def clean_as_of(value: object) -> str | None:
    """A time not in the future (what was current then), as this store writes times."""
    at = clean_time(value, "as_of")
    if at is not None and at > now():
        raise InvalidInput("as_of is in the future: the memory knows only what is true until now")
    return at


def clean_supersedes(value: object) -> list[int]:
    if value is None:
        return []
    if not isinstance(value, list) or len(value) > MAX_SUPERSEDES:
        raise InvalidInput(f"supersedes must be a list of up to {MAX_SUPERSEDES} fact ids")
    try:
        ids = [clean_id(v) for v in value]
    except InvalidInput:
        raise InvalidInput(f"supersedes must be a list of up to {MAX_SUPERSEDES} fact ids") from None
    return list(dict.fromkeys(ids))  # type: ignore[arg-type]


def clean_resolution(value: object) -> str:
    if value not in RESOLUTIONS:
        raise InvalidInput(f"resolution must be one of {', '.join(RESOLUTIONS)}")
    return value  # type: ignore[return-value]


def clean_pair(item: object, n: int) -> dict:
    """The `n`th pair of a backup (POST /conflicts/restore; a backup's "conflict" line) as GET
    /conflicts?all=true gives it: `id` (may be left out), `old`, `new`, `score`, `differs`,
    `resolution` (null: proposed, or "keep_both"). Other fields are ignored."""
    at = f"conflicts[{n}]"
    if not isinstance(item, dict):
        raise InvalidInput(f"{at} must be an object")
    pair = {}
    for name in ("id", "old", "new"):
        value = item.get(name)
        if value is None and name != "id":
            raise InvalidInput(f"{at}.{name} is required: a fact id")
        try:
            pair[name] = clean_id(value)
        except InvalidInput:
            raise InvalidInput(f"{at}.{name} must be a whole number from 1 to {MAX_FACT_ID}") from None
    if pair["old"] == pair["new"]:
        raise InvalidInput(f"{at}: old and new are the same fact")
    score = item.get("score")
    if isinstance(score, bool) or not isinstance(score, (int, float)) or not -1 <= score <= 1:
        raise InvalidInput(f"{at}.score must be a number from -1 to 1")
    differs = item.get("differs")
    if (not isinstance(differs, dict) or set(differs) != {"kinds", "old", "new"}
            or not all(isinstance(v, list) and all(isinstance(w, str) for w in v) for v in differs.values())
            or not set(differs["kinds"]) <= set(KINDS)):
        raise InvalidInput(f"{at}.differs must be {{kinds, old, new}}: lists of words, kinds of {', '.join(KINDS)}")
    for side in ("old", "new"):
        for word in differs[side]:
            valid_unicode(word, f"{at}.differs.{side}")
    if item.get("resolution") not in (None, "keep_both", "replace"):
        raise InvalidInput(f"{at}.resolution must be null (proposed), keep_both or replace (replaced at once)")
    return pair | {"score": float(score), "differs": differs, "resolution": item.get("resolution")}


def diff_words(text: str) -> list[str]:
    return [w for w in (t.strip(EDGES) for t in re.findall(r"\S+", text)) if w]


def same(word: str) -> str:
    """How the diff compares a word: case-folded, a curly apostrophe as a straight one."""
    return word.casefold().replace("\u2019", "'")


def differences(old: str, new: str) -> dict:
    """What differs between two facts: `kinds` (the dedup guard's reasons, all that apply: a
    number, a date or time, a negation, a name; else "word" when any word differs), and the words
    each holds that the other lacks, as written, each once, in order (`old`, `new`)."""
    wo, wn = words(old), words(new)
    kinds = []
    if sorted(numbers(wo)) != sorted(numbers(wn)):
        kinds.append("number")
    if calendar(wo) != calendar(wn):
        kinds.append("date")
    if sum(w in NEGATIONS for w in wo) % 2 != sum(w in NEGATIONS for w in wn) % 2:
        kinds.append("negation")
    if any(not mentions(wn, n) for n in names(old)) or any(not mentions(wo, n) for n in names(new)):
        kinds.append("name")
    do, dn = diff_words(old), diff_words(new)
    ko, kn = {same(w) for w in do}, {same(w) for w in dn}
    only_old = list(dict.fromkeys(w for w in do if same(w) not in kn))
    only_new = list(dict.fromkeys(w for w in dn if same(w) not in ko))
    if not kinds and (only_old or only_new):
        kinds.append("word")
    return {"kinds": kinds, "old": only_old, "new": only_new}


def proposals(near: list[tuple[int, float]], texts: dict[int, str], text: str,
              newer: frozenset[int] = frozenset()) -> list[tuple[int, float, dict, bool]]:
    """Of a new fact's eligible same-type neighbours (id, cosine: current, not its duplicate, not
    named in its `supersedes`; `texts` their texts), the ones it may replace, with what differs:
    the closest PROPOSE_CANDIDATES at or above PROPOSE (ties to the smaller id) that answer the
    question `text` answers, at most PROPOSE_MOST. A pair goes by the facts' times, not by which
    was written last: a neighbour in `newer` (created after the new fact: an import's older
    fact) is the pair's new fact, and its flag (the last item) says so."""
    kept = sorted(((fid, s) for fid, s in near if s >= PROPOSE), key=lambda p: (-p[1], p[0]))[:PROPOSE_CANDIDATES]
    out = []
    for fid, s in kept:
        old, new = (text, texts[fid]) if fid in newer else (texts[fid], text)
        answer = answers(old, new, s)
        if answer is not None:
            out.append((fid, s, proposal_differs(old, new, answer), fid in newer))
    return out[:PROPOSE_MOST]


def proposal_differs(old: str, new: str, answer: Answer) -> dict:
    """A proposal's `differs`: the kinds of `differences`, and each fact's answer (the old value
    and the new one) as the words of its text that hold it ("heron-42", not "heron" and "42"), not
    every word that differs."""
    return {"kinds": differences(old, new)["kinds"], "old": holding(old, answer.old), "new": holding(new, answer.new)}


def holding(text: str, answer: list[str]) -> list[str]:
    """The words of `text` (as `diff_words` cuts them) that hold a word of `answer`, each once."""
    wanted = {same(w) for a in answer for w in a.split()}
    return list(dict.fromkeys(w for w in diff_words(text)
                              if same(w) in wanted or any(same(t) in wanted for t in re.findall(r"[^\W_]+", w))))


def why_differs(d: dict) -> str:
    """`differences` in words, for a note or an agent: "9:30 / 9:00"."""
    old, new = " ".join(d["old"]) or "-", " ".join(d["new"]) or "-"
    return f"{old} / {new}" if d["old"] or d["new"] else "the same words"
