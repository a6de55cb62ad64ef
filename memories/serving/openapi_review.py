"""The OpenAPI document's routes for what the owner reviews and can undo: the contradictions
queue, the history and its undo, the recall log, the memory's settings (openapi.py has the rest
and the shapes)."""

from __future__ import annotations

from .openapi import (CLIENT, DIFFERS, ENTRY, ENTRY_ID, FACT, FUSION, PAGE, PROPOSALS, RECALL_ENTRY, RESOLUTION, REVIEW,
                      SETTINGS, body, errors, obj, ok, query)


def review_paths() -> dict:
    return {
    "/conflicts": {"get": {
        "summary": "Open proposals: pairs of current facts where the newer may replace the older, newest first",
        "parameters": [*PAGE, query("all", {"type": "boolean", "default": False},
                                    "every pair the memory keeps (what a backup holds): those resolved as both "
                                    "true and those whose fact was replaced or expired too"),
                       query("done", {"type": "boolean", "default": False},
                             "the pairs the memory replaced at once whose new fact still replaces the old one "
                             "(not with all)")],
        "responses": {**ok(obj({"conflicts": {"type": "array", "items": obj({
            "id": {"type": "integer"}, "old": FACT, "new": FACT, "score": {"type": "number"}, "differs": DIFFERS,
            "resolution": RESOLUTION})},
            "next_cursor": {"type": ["string", "null"]}, "total": {"type": "integer"}})), **errors("401", "422")},
    }},
    "/conflicts/restore": {"post": {
        "summary": "Put back a backup's pairs, after its facts: each whose two facts are here and whose pair and id are free",
        "description": "A pair resolved as both true is recorded as a `resolve` history entry (its undo opens the "
        "pair again). For moving a memory: `python -m memories import --url`.",
        "parameters": [CLIENT],
        "requestBody": body(obj({"conflicts": {"type": "array", "maxItems": 100, "items": obj({
            "id": {"type": "integer", "minimum": 1}, "old": {"type": "integer", "minimum": 1},
            "new": {"type": "integer", "minimum": 1}, "score": {"type": "number", "minimum": -1, "maximum": 1},
            "differs": DIFFERS, "resolution": RESOLUTION}, required=["old", "new", "score", "differs"])}},
            required=["conflicts"])),
        "responses": {**ok(obj({"restored": {"type": "integer"}, "skipped": {"type": "integer"}})),
                      **errors("400", "401", "413", "422")},
    }},
    "/conflicts/resolve": {"post": {
        "summary": "Resolve a pair of current facts: new replaces old, old replaces new, or both true",
        "parameters": [CLIENT],
        "requestBody": body(obj({"old": {"type": "integer", "minimum": 1}, "new": {"type": "integer", "minimum": 1},
                                 "resolution": {"type": "string", "enum": ["replace", "keep_both", "keep_old"]}})),
        "responses": {**ok(obj({"old": FACT, "new": FACT, "resolution": {"type": "string"}, "entry": {"type": "integer"}})),
                      **errors("400", "401", "404", "422")},
    }},
    "/history": {
        "get": {
            "summary": "What was done to the memory, by any client, newest first",
            "parameters": [*PAGE, query("op", {"type": "string", "enum": ["add", "edit", "delete", "restore", "settings", "resolve", "review"]}),
                           query("client", {"type": "string", "maxLength": 64}),
                           query("fact_id", {"type": "integer", "minimum": 1})],
            "responses": {**ok(obj({"entries": {"type": "array", "items": ENTRY},
                                    "next_cursor": {"type": ["string", "null"]}})), **errors("401", "422")},
        },
        "delete": {
            "summary": "Forget a fact for good: every history entry of it",
            "parameters": [{**query("fact_id", {"type": "integer", "minimum": 1}), "required": True}],
            "responses": {**ok(obj({"deleted": {"type": "integer"}})), **errors("401", "422")},
        },
    },
    "/history/{id}": {
        "parameters": [ENTRY_ID],
        "get": {"summary": "One history entry", "responses": {**ok(ENTRY), **errors("401", "404")}},
    },
    "/history/{id}/undo": {
        "parameters": [ENTRY_ID],
        "post": {
            "summary": "Undo one entry: a delete comes back, an edit goes back, an add goes, settings go back",
            "parameters": [CLIENT],
            "requestBody": {"required": False, "content": {"application/json": {"schema": obj(
                {"force": {"type": "boolean", "default": False,
                           "description": "undo even over what was written since (else 409 changed_since)"}},
                required=[])}}},
            "responses": {**ok(obj({"entry": ENTRY, "fact": {"anyOf": [FACT, {"type": "null"}]},
                                    "restored": {"type": "boolean"}})),
                          **errors("400", "401", "404", "409", "422", "503", "507")},
        },
    },
    "/recalls": {
        "get": {
            "summary": "The recall log: recalls as clients made them, newest first",
            "parameters": [*PAGE, query("client", {"type": "string", "maxLength": 64}),
                           query("q", {"type": "string", "maxLength": 1000}, "a substring of the query"),
                           query("empty", {"type": "boolean"}, "only recalls that returned nothing"),
                           query("fact_id", {"type": "integer", "minimum": 1}, "only recalls that returned this fact")],
            "responses": {**ok(obj({"recalls": {"type": "array", "items": RECALL_ENTRY},
                                    "next_cursor": {"type": ["string", "null"]}, "total": {"type": "integer"}})),
                          **errors("401", "422")},
        },
        "delete": {"summary": "Clear the recall log", "responses": {**ok(obj({"deleted": {"type": "integer"}})),
                                                                    **errors("401")}},
    },
    "/recalls/{id}": {
        "parameters": [ENTRY_ID],
        "get": {"summary": "One logged recall", "responses": {**ok(RECALL_ENTRY), **errors("401", "404")}},
    },
    "/settings": {
        "get": {"summary": "The memory's own recall settings, and the thresholds in use with where each comes from", "responses": {**ok(SETTINGS), **errors("401")}},
        "put": {
            "summary": "Set the memory's own recall settings and duplicate threshold (recorded in the history)",
            "parameters": [CLIENT],
            "requestBody": body(obj({"fusion": FUSION, "review": {**REVIEW, "required": []}, "proposals": PROPOSALS, "threshold": {
                "type": ["number", "null"], "minimum": 0.5, "maximum": 1,
                "description": "the memory's own duplicate threshold (the review floor to 1); null: the model's or the environment's again"}},
                required=[], extra=False) | {"minProperties": 1}),
            "responses": {**ok(SETTINGS), **errors("400", "401", "422")},
        },
    }
    }
