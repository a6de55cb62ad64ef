"""The OpenAPI document the service serves at /openapi.json; a test checks it against the routes."""

from __future__ import annotations

from functools import cache

from ..facts import DEFAULT_ORDER, ORDERS

TYPE = {"type": "string", "enum": ["fact", "skill", "log"]}
TYPE_FILTER = {"type": "string", "enum": ["fact", "skill", "log", ""], "description": "empty: any type"}
NULLABLE_INT = {"type": ["integer", "null"]}
NULLABLE_NUM = {"type": ["number", "null"]}
FACT = {"$ref": "#/components/schemas/Fact"}
TIME = {"type": "string", "format": "date-time"}
NULLABLE_TIME = {"type": ["string", "null"], "format": "date-time"}
AS_OF = {**TIME, "description": "a time not in the future: recall what was current then"}
INCLUDE_STALE = {"type": "boolean", "default": False, "description": "also replaced and expired facts, each saying `current`"}
MATCH = {"type": "string", "enum": ["exact", "near", "replaced"],
         "description": "replaced: no current fact holds the text, a replaced one does (its superseded_by says by what)"}
ERRORS = {
    "400": "Malformed request body",
    "401": "Missing or wrong X-Memory-Secret",
    "404": "No such fact",
    "409": "The edit would duplicate another fact, the id to restore is in use, the entry was undone already, or "
           "(changed_since) its fact or the settings changed after it: the error's `entry` names the newest entry since "
           "and `current` what it holds now; or (undo_refused) the undo would leave what no write may make: a loop of "
           "replacements, or a fact replaced by one that is gone or not current",
    "413": "Text, query or body too large",
    "422": "A value is invalid",
    "503": "The embedding model is unavailable, the write could not be committed, or the pairs are still being built",
    "507": "memory_full: the vectors and words in memory would pass the memory's budget (MEMORY_BUDGET_BYTES)",
}


def obj(properties: dict, required: list[str] | None = None, extra: bool = True) -> dict:
    schema = {"type": "object", "properties": properties, "required": list(properties) if required is None else required}
    if not extra:
        schema["additionalProperties"] = False
    return schema


def ok(schema: dict, status: str = "200", description: str = "OK") -> dict:
    return {status: {"description": description, "content": {"application/json": {"schema": schema}}}}


def errors(*statuses: str) -> dict:
    return {
        s: {"description": ERRORS[s], "content": {"application/json": {"schema": {"$ref": "#/components/schemas/Error"}}}}
        for s in statuses
    }


def body(schema: dict) -> dict:
    return {"required": True, "content": {"application/json": {"schema": schema}}}


def query(name: str, schema: dict, description: str = "") -> dict:
    return {"name": name, "in": "query", "required": False, "schema": schema, "description": description}


DIFFERS = obj({
    "kinds": {"type": "array", "items": {"type": "string", "enum": ["number", "date", "negation", "name", "word"]}},
    "old": {"type": "array", "items": {"type": "string"}, "description": "words the old fact holds that the new lacks"},
    "new": {"type": "array", "items": {"type": "string"}, "description": "words the new fact holds that the old lacks"},
})
PROPOSAL = obj({"id": {"type": "integer"}, "fact": FACT, "score": {"type": "number"}, "differs": DIFFERS,
                "replaced": {"type": "boolean", "description": "replaced at once by this write (the memory's proposals setting)"}})
NEW_FACT = obj({
    "text": {"type": "string", "minLength": 1, "maxLength": 8000}, "type": TYPE,
    "source": {"type": "string", "maxLength": 200},
    "id": {"type": "integer", "minimum": 1, "maximum": 2**53 - 1}, "created_at": {"type": "string", "format": "date-time"},
    "updated_at": {"type": "string", "format": "date-time"},
    "force": {"type": "boolean", "default": False,
              "description": "store even over a near (not an exact) duplicate: the client's decision, noted in the history"},
    "valid_until": {**NULLABLE_TIME, "description": "when the fact stops being current (not before its created_at)"},
    "supersedes": {"type": "array", "maxItems": 20, "items": {"type": "integer", "minimum": 1},
                   "description": "facts this one replaces, in the same transaction"},
    "superseded_by": {**NULLABLE_INT, "description": "kept only with restore: the fact that replaced this one"},
    "reviewed_at": {**NULLABLE_TIME, "description": "kept only with restore: when the owner reviewed it"},
}, required=["text"])
ADDED = obj({
    "id": {"type": "integer"}, "created": {"type": "boolean"}, "fact": FACT,
    "duplicate": obj({"match": MATCH, "score": {"type": "number"}}),
    "conflicts": {"type": "array", "items": PROPOSAL, "description": "a created fact's proposals: current facts it may replace"},
    "pending": {"const": True, "description": "stored unreviewed in a memory whose review is before: recalled once reviewed"},
}, required=["id", "created", "fact"])
FACT_ID = {"name": "id", "in": "path", "required": True, "schema": {"type": "integer", "minimum": 1}}
ENTRY_ID = {"name": "id", "in": "path", "required": True, "schema": {"type": "integer", "minimum": 1}}
RESOLUTION = {"type": ["string", "null"], "enum": ["keep_both", "replace", None],
              "description": "null: proposed (open while both facts are current); keep_both: the owner said both are true; "
                             "replace: the memory replaced the old fact at once (its proposals setting)"}
PROPOSALS = {"type": "string", "enum": ["propose", "replace"],
             "description": "propose: every proposal waits for a decision; replace: a trusted client's fact written alone "
                            "that proposes exactly one fact replaces it at once"}
CLIENT = {"name": "X-Memory-Client", "in": "header", "required": False,
          "schema": {"type": "string", "maxLength": 64, "pattern": "^[ -~]*$"},
          "description": "who asks, for the history and the recall log: 1 to 64 printable ASCII characters"}
NOTE = query("note", {"type": "string", "maxLength": 200}, "why, as the history records it")
PAGE = [query("limit", {"type": "integer", "minimum": 1, "maximum": 100, "default": 50}),
        query("cursor", {"type": "string"}, "next_cursor of the previous page")]
NULLABLE_OBJ = {"type": ["object", "null"]}
ENTRY = obj({
    "id": {"type": "integer"}, "at": {"type": "string", "format": "date-time"}, "client": {"type": "string"},
    "op": {"type": "string", "enum": ["add", "edit", "delete", "restore", "settings", "resolve", "review"]},
    "fact_id": NULLABLE_INT, "before": NULLABLE_OBJ, "after": NULLABLE_OBJ, "note": {"type": "string"},
    "undone_by": NULLABLE_INT,
})
RECALL_ENTRY = obj({
    "id": {"type": "integer"}, "at": {"type": "string", "format": "date-time"}, "client": {"type": "string"},
    "query": {"type": "string"}, "type": {"type": ["string", "null"]}, "mode": {"type": "string"},
    "limit": {"type": "integer"}, "settings": {"type": "object"},
    "results": {"type": "array", "items": obj({
        "id": {"type": "integer"}, "via": {"type": "string", "enum": ["kw", "vec", "both"]}, "score": {"type": "number"},
        "text": {"type": "string", "description": "the fact's text as the client was given it (absent in rows logged "
                 "before it was kept, and once the fact is forgotten for good)"},
        "forgotten": {"type": "boolean", "description": "the fact was forgotten for good: its text is gone from the log"},
    }, required=["id", "via", "score"])},
    "model": {"type": ["string", "null"]}, "ms": {"type": "number"},
})
FUSION = obj(
    {
        "preset": {"type": "string", "enum": ["default", "seed"], "description": "start from these settings"},
        "k": {"type": "integer", "minimum": 0, "maximum": 1000},
        "depth": {"type": "integer", "minimum": 1, "maximum": 1000},
        "kw_weight": {"type": "number", "minimum": 0, "maximum": 10},
        "vec_weight": {"type": "number", "minimum": 0, "maximum": 10},
        "phrases": {"type": "boolean"},
        "method": {"type": "string", "enum": ["rrf", "relative", "ratio", "info"]},
        "alias_self": {"type": "boolean"},
        "expand": {"type": "number", "minimum": 0, "maximum": 1,
                   "description": "the cosine a vocabulary word needs with a query term to join the keyword query; 0 is off"},
        "rerank": {"type": "integer", "minimum": 0, "maximum": 20,
                   "description": "how many of the fused top are ranked again without the query words they share; 0 is off"},
    },
    required=[],
    extra=False,
)
EXPANSIONS = {"type": "array", "description": "vocabulary words OR-ed into the keyword query: each with the query term it "
              "came from and their cosine",
              "items": obj({"word": {"type": "string"}, "term": {"type": "string"}, "cosine": {"type": "number"}})}
HIT = obj({
    "fact": FACT, "current": {"type": "boolean"}, "reviewed": {"type": "boolean"}, "score": {"type": "number"}, "via": {"type": "string", "enum": ["kw", "vec", "both"]},
    "kw_rank": NULLABLE_INT, "vec_rank": NULLABLE_INT, "bm25": NULLABLE_NUM, "cosine": NULLABLE_NUM,
    "parts": obj({"kw": {"type": "number"}, "vec": {"type": "number"}, "rerank": {"type": "number"}}),
    "may_be_outdated": {"type": "boolean", "description": "an open proposal says a newer fact may replace this one "
                        "(recall places the newer one above it)"},
    "edited_since": {"type": "boolean", "description": "with as_of: an edit changed the fact's text after as_of (the text is today's)"},
}, required=["fact", "current", "reviewed", "score", "via", "kw_rank", "vec_rank", "bm25", "cosine", "parts", "may_be_outdated"])
RECALL = obj(
    {
        "results": {"type": "array", "items": HIT},
        "mode": {"type": "string", "enum": ["hybrid", "keyword", "vector", "keyword-only"],
                 "description": "the mode asked for, or keyword-only when it needed the model and the model failed"},
        "warning": {"type": "string"},
        "kw": {"type": "array", "items": obj({
            "fact": FACT, "rank": {"type": "integer"}, "bm25": {"type": "number"},
            "highlighted": {"type": "string", "description": "the text with each matched token between U+0002 and U+0003"},
        })},
        "vec": {"type": "array", "items": obj({"fact": FACT, "rank": {"type": "integer"}, "cosine": {"type": "number"}})},
        "match": {"type": "string"},
        "information": {**NULLABLE_NUM, "description": "method info: the query terms' summed IDF, what BM25 is divided by"},
        "terms": {"type": "array", "description": "method info: each query term, how many facts hold it, its IDF "
                  "(an expansion word says the term it came from)",
                  "items": obj({"term": {"type": "string"}, "facts": {"type": "integer"}, "idf": {"type": "number"},
                                "from": {"type": "string"}}, required=["term", "facts", "idf"])},
        "expansions": EXPANSIONS,
        "rerank": {"oneOf": [{"type": "null"}, obj({
            "shared": {"type": "array", "items": {"type": "string"}, "description": "the query terms the top facts share"},
            "query": {"type": "string", "description": "the query without them, as embedded"},
            "facts": {"type": "array", "items": obj({"id": {"type": "integer"}, "text": {"type": "string"},
                                                     "cosine": {"type": "number"}})},
        })], "description": "what reranking the fused top did; null when it did nothing"},
        "fusion": FUSION,
        "timing": obj({"rank_ms": {"type": "number", "description": "ranking and reading the rows, without the embedding"}}),
    },
    required=["results", "mode"],
)
SOURCE = {"type": "string", "enum": ["model", "environment", "memory", "file"],
          "description": "where the number in use comes from: the model's row of the table, the environment, the memory's "
                         "own settings, or (the review floor, local service) the file's, which another process rebuilt the pairs at"}
NUMBER = obj({"value": {"type": "number"}, "from": SOURCE, "model": {"type": "number", "description": "the model's row"}})
REVIEW = obj({"mode": {"type": "string", "enum": ["after", "before"],
                        "description": "after: an unreviewed fact is recalled at once; before: only once reviewed"},
               "trusted": {"type": "array", "maxItems": 50, "items": {"type": "string", "minLength": 1, "maxLength": 64},
                           "description": "clients (with or without a version) and sources whose writes count as reviewed"}})
SETTINGS = obj({
    "fusion": FUSION, "shipped": FUSION, "changed": {"type": "array", "items": {"type": "string"}}, "review": REVIEW,
    "proposals": PROPOSALS,
    "model": obj({"id": {"type": ["string", "null"]},
                  "measured": {"type": ["string", "null"], "description": "when and where the model's numbers were measured; null: not measured"}}),
    "thresholds": obj({"duplicate": NUMBER, "review_floor": NUMBER, "expand": NUMBER}),
})
STATS = obj(
    {
        "facts": {"type": "integer"}, "fts": {"type": "integer"}, "vectors": {"type": "integer"},
        "stale_vectors": {"type": "integer"}, "vectors_in_memory": {"type": "integer"},
        "keyword_errors": {"type": "integer", "description": "keyword searches that failed since the memory opened "
                           "(a damaged FTS index): those recalls answered by vector alone"},
        "by_type": obj({t: {"type": "integer"} for t in ("fact", "skill", "log")}),
        "orphans": obj({
            name: {"type": "array", "items": {"type": "integer"}}
            for name in ("fts_without_fact", "vectors_without_fact", "facts_without_fts", "facts_without_vector",
                         "vectors_out_of_step")
        }),
        "consistent": {"type": "boolean", "description": "no orphans, as many FTS entries and vectors as facts, "
                       "and the vectors recall searches in memory are exactly those of the vectors table"},
        "memory_bytes": {"type": "integer", "description": "bytes the vectors and words in memory take: exact for "
                         "their arrays, an upper bound for their maps (the pairs are read from their table)"},
        "memory_parts": obj({"vectors": {"type": "integer"}, "vocabulary": {"type": "integer"}, "text_vectors": {"type": "integer"},
                             "term_lists": {"type": "integer", "description": "the local service only: the keyword list's own "
                                            "postings, up to MEMORY_TERM_LISTS_BYTES"}},
                            ["vectors", "vocabulary", "text_vectors"]),
        "memory_budget": {"type": ["integer", "null"], "description": "MEMORY_BUDGET_BYTES (null: none, the local "
                          "service's default; the Worker's is 100 MiB)"},
        "capacity_facts": {"type": "integer", "description": "the Worker only: about how many facts of its model fit "
                           "in the budget"},
        "memory_full": {"type": "boolean", "description": "its vectors would pass the budget, so none is in memory: "
                        "keyword recall only, writes answer 507"},
        "warning": {"type": "string", "description": "with memory_full: why, and what to do"},
        "history": obj({
            "entries": {"type": "integer"}, "keep": {"type": "integer", "description": "entries kept (MEMORY_HISTORY), "
                                                      "deletes not counted"},
            "deletes": {"type": "integer", "description": "deletes in the trash, not undone"},
            "deletes_days": {"type": "integer"}, "deletes_kept": {"type": "integer"},
        }),
    },
    # capacity_facts is the Worker's alone; warning comes with memory_full only
    required=["facts", "fts", "vectors", "stale_vectors", "vectors_in_memory", "keyword_errors", "by_type", "orphans",
              "consistent", "memory_bytes", "memory_parts", "memory_budget", "memory_full", "history"],
)


@cache
def openapi_document() -> dict:
    from .openapi_review import review_paths  # (it reads the shapes above)

    return {
        "openapi": "3.1.0",
        "info": {
            "title": "Memory Desk memory service",
            "version": "4",
            "description": "An agent's long-term memory with hybrid recall. Every route but "
            "/health and /openapi.json needs the X-Memory-Secret header. The local service serves one "
            "memory at its root; the Cloudflare Worker serves one per name at /memories/{name}/... "
            "(a path without the prefix is the memory called default). Strings must be valid Unicode: "
            "one with a lone surrogate (an unpaired \\ud800 escape) gets 422, JSON nested too deeply 400. "
            "docs/memory-api.md is the prose.",
        },
        "components": {
            "securitySchemes": {"secret": {"type": "apiKey", "in": "header", "name": "X-Memory-Secret"}},
            "schemas": {
                "Fact": obj({
                    "id": {"type": "integer"}, "text": {"type": "string"}, "type": TYPE,
                    "source": {"type": "string"},
                    "created_at": {"type": "string", "format": "date-time"},
                    "updated_at": {"type": "string", "format": "date-time"},
                    "valid_until": {**NULLABLE_TIME, "description": "after it the fact is no longer current; null: current"},
                    "superseded_by": {**NULLABLE_INT, "description": "the fact that replaced this one, or null"},
                    "reviewed_at": {**NULLABLE_TIME, "description": "when the owner reviewed it; null: not yet"},
                }),
                "Error": obj({"error": obj({"code": {"type": "string"}, "message": {"type": "string"}}, ["code", "message"])}),
            },
        },
        "security": [{"secret": []}],
        "paths": {
            "/health": {"get": {
                "summary": "Is the service up; with the secret, also its count and model", "security": [],
                "description": "Without the secret only `ok`: nothing about the memory is said, and the memory is"
                               " not opened (on the Worker its Durable Object is not woken, so no storage is created).",
                "responses": ok(obj({
                    "ok": {"type": "boolean"}, "facts": {"type": "integer"}, "model": {"type": ["string", "null"]},
                    "dims": {"type": "integer"}, "mode": {"type": "string", "enum": ["hybrid", "keyword-only"]},
                    "memory_full": {"type": "boolean"}, "warning": {"type": "string"},
                    "engine": {"type": "string", "enum": ["python", "worker"],
                               "description": "which implementation answers: the local service or the Worker"},
                    "embedding": {**obj({"calls": {"type": "integer"}, "waiting_ms": {"type": "integer"}}),
                                  "description": "the embedding model's calls in flight now and how long the oldest has"
                                                 " waited: a write waiting there lands when the model answers"},
                }, required=["ok"])),  # without the secret, ok alone
            }},
            "/openapi.json": {"get": {
                "summary": "This document", "security": [], "responses": ok({"type": "object"}),
            }},
            "/facts": {
                "get": {
                    "summary": "Browse facts, newest first or in another order",
                    "parameters": [
                        query("type", TYPE_FILTER), query("source", {"type": "string"}),
                        query("q", {"type": "string", "maxLength": 8000}, "plain substring filter, no longer than a fact"),
                        query("order", {"type": "string", "enum": list(ORDERS), "default": DEFAULT_ORDER},
                              "created, updated (ties broken by id) or id, newest or highest first; _asc: oldest or lowest first"),
                        query("limit", {"type": "integer", "minimum": 1, "maximum": 100, "default": 50}),
                        query("cursor", {"type": "string"}, "next_cursor of the previous page, in the same order"),
                        query("ids", {"type": "string", "pattern": "^[0-9]+(,[0-9]+){0,99}$"},
                              "only these facts: up to 100 ids, comma-separated"),
                        query("status", {"type": "string", "enum": ["all", "current", "replaced", "expired"], "default": "all"}),
                        query("reviewed", {"type": "boolean"}, "only the facts the owner reviewed (true) or not (false)"),
                        query("client", {"type": "string", "maxLength": 64}, "the facts this client wrote (its adds in the history)"),
                        query("source_prefix", {"type": "string", "maxLength": 200}, "the facts whose source starts so"),
                        query("as_of", AS_OF, "the memory as it was then: facts created after it left out, status judged at it"),
                    ],
                    "responses": {
                        **ok(obj({"facts": {"type": "array", "items": FACT}, "next_cursor": {"type": ["string", "null"]},
                                  "total": {"type": "integer"}})),
                        **errors("401", "422"),
                    },
                },
                "post": {
                    "summary": "Store a fact, or return the one it duplicates",
                    "parameters": [CLIENT],
                    "description": "id, created_at and updated_at are for restoring a deleted or exported fact.",
                    "requestBody": body(NEW_FACT),
                    "responses": {
                        **ok(obj({"id": {"type": "integer"}, "created": {"const": True}, "fact": FACT,
                                  "conflicts": {"type": "array", "items": PROPOSAL}, "pending": {"const": True}},
                                 required=["id", "created", "fact", "conflicts"]), "201", "Created"),
                        **ok(obj({
                            "id": {"type": "integer"}, "created": {"const": False}, "fact": FACT,
                            "duplicate": obj({"match": MATCH, "score": {"type": "number"}}),
                        }), "200", "Already stored: the existing fact"),
                        **errors("400", "401", "409", "413", "422", "503", "507"),
                    },
                },
            },
            "/facts/batch": {"post": {
                "summary": "Store up to 100 facts in one transaction: all of them, or none on an error",
                "parameters": [CLIENT],
                "description": "Each fact as POST /facts takes it; each result as POST /facts answers "
                "(created, or the fact it duplicates). For moving a memory: `python -m memories import --url`.",
                "requestBody": body(obj({"facts": {"type": "array", "items": NEW_FACT, "maxItems": 100},
                                         "restore": {"type": "boolean", "default": False,
                                                     "description": "store each fact as given, with no duplicate check "
                                                     "(a backup into an empty memory); an id in use is still a 409"},
                                         "dry_run": {"type": "boolean", "default": False,
                                                     "description": "every check and answer as if stored; nothing is kept"},
                                         "note": {"type": "string", "maxLength": 200,
                                                  "description": "each history entry's note (an import names its file)"},
                                         "import_id": {"type": "string", "pattern": "^[A-Za-z0-9_-]{1,64}$",
                                                       "description": "the import this batch belongs to, a token the importer "
                                                       "makes: while one import runs, a batch of another is a 409 "
                                                       "import_running (one import at a time); without it, never refused"},
                                         "import_done": {"type": "boolean", "default": False,
                                                         "description": "with import_id: the import's last batch (an empty one "
                                                         "ends it); the memory takes another import once it succeeds"}},
                                        required=["facts"])),
                "responses": {**ok(obj({"results": {"type": "array", "items": ADDED}})),
                              **errors("400", "401", "409", "413", "422", "503", "507")},
            }},
            "/facts/review": {"post": {
                "summary": "The owner reviewed these facts (one history entry, undoable)",
                "parameters": [CLIENT],
                "requestBody": body(obj({"ids": {"type": "array", "minItems": 1, "maxItems": 200,
                                                 "items": {"type": "integer", "minimum": 1}}})),
                "responses": {**ok(obj({"reviewed": {"type": "array", "items": {"type": "integer"}}, "entry": NULLABLE_INT})),
                              **errors("400", "401", "422")},
            }},
            "/facts/{id}": {
                "parameters": [FACT_ID],
                "get": {"summary": "One fact", "responses": {**ok(FACT), **errors("401", "404")}},
                "patch": {
                    "summary": "Edit a fact; its FTS entry and vector change with it",
                    "parameters": [CLIENT, NOTE],
                    "requestBody": body(obj({
                        "text": {"type": "string", "minLength": 1, "maxLength": 8000}, "type": TYPE,
                        "source": {"type": "string", "maxLength": 200},
                        "valid_until": {**NULLABLE_TIME, "description": "when it stops being current; null: never"},
                        "superseded_by": {**NULLABLE_INT, "description": "a current fact that replaces this one; null: not replaced"},
                    }, required=[])),
                    "responses": {**ok(FACT), **errors("400", "401", "404", "409", "413", "422", "503", "507")},
                },
                "delete": {
                    "summary": "Delete a fact with its FTS entry and vector",
                    "parameters": [CLIENT, NOTE],
                    "responses": {**ok(obj({"deleted": {"type": "integer"}, "fact": FACT})), **errors("401", "404", "422", "503")},
                },
            },
            "/facts/{id}/neighbours": {
                "parameters": [FACT_ID],
                "get": {
                    "summary": "The nearest facts by cosine, any type",
                    "parameters": [query("limit", {"type": "integer", "minimum": 1, "maximum": 100, "default": 10})],
                    "responses": {
                        **ok(obj({"neighbours": {"type": "array", "items": obj({"fact": FACT, "cosine": {"type": "number"}})}})),
                        **errors("401", "404", "422", "507"),
                    },
                },
            },
            "/recall": {"post": {
                "summary": "Hybrid recall: the BM25 and cosine lists merged by the request's fusion settings (default preset if none)",
                "requestBody": body(obj({
                    "query": {"type": "string", "minLength": 1, "maxLength": 32000}, "type": TYPE,
                    "limit": {"type": "integer", "minimum": 1, "maximum": 100, "default": 15},
                    "debug": {"type": "boolean", "default": False}, "fusion": FUSION,
                    "mode": {"type": "string", "enum": ["hybrid", "keyword", "vector"], "default": "hybrid",
                             "description": "hybrid fuses the keyword and vector lists; keyword and vector answer from one"},
                    "log": {"type": "boolean", "default": True, "description": "keep it in the recall log (GET /recalls)"},
                    "as_of": AS_OF, "include_stale": INCLUDE_STALE,
                }, required=["query"])),
                "parameters": [CLIENT],
                "responses": {**ok(RECALL), **errors("400", "401", "413", "422")},
            }},
            "/explain": {"post": {
                "summary": "Why one fact ranks where it does for a query",
                "requestBody": body(obj({
                    "query": {"type": "string", "minLength": 1, "maxLength": 32000},
                    "id": {"type": "integer", "minimum": 1}, "type": TYPE, "fusion": FUSION,
                    "as_of": AS_OF, "include_stale": INCLUDE_STALE,
                }, required=["query", "id"])),
                "responses": {**ok(obj({
                    "fact": FACT, "match": {"type": "string"},
                    "query_terms": {"type": "array", "items": {"type": "string"}},
                    "fact_terms": {"type": "array", "items": {"type": "string"}},
                    "matched_terms": {"type": "array", "items": {"type": "string"}},
                    "bm25": NULLABLE_NUM, "kw_rank": NULLABLE_INT, "cosine": NULLABLE_NUM, "vec_rank": NULLABLE_INT,
                    "depth": {"type": "integer"}, "kw_contribution": {"type": "number"},
                    "vec_contribution": {"type": "number"}, "rerank_contribution": {"type": "number"},
                    "score": {"type": "number"},
                    "information": NULLABLE_NUM, "expansions": EXPANSIONS, "fused_rank": NULLABLE_INT, "fusion": FUSION,
                    "current": {"type": "boolean"},
                    "warning": {"type": "string"},
                }, required=["fact", "match", "bm25", "kw_rank", "cosine", "vec_rank", "score"])),
                    **errors("400", "401", "404", "413", "422")},
            }},
            "/duplicates": {"get": {
                "summary": "Same-type pairs at or above a cosine threshold, highest first",
                "description": "At or above the review floor the pairs kept on write are read; below it every pair "
                "is computed, which is slow on a big memory.",
                "parameters": [
                    query("threshold", {"type": "number", "minimum": 0.5, "maximum": 1, "default": 0.97}),
                    query("type", TYPE_FILTER),
                    query("limit", {"type": "integer", "minimum": 1, "maximum": 10000, "default": 1000}),
                ],
                "responses": {**ok(obj({
                    "pairs": {"type": "array", "items": obj({
                        "a": FACT, "b": FACT, "score": {"type": "number"},
                        "distinct": {"type": ["string", "null"], "description": "why the two may still be different facts "
                                     "(a number, date, name or negation apart), or null"}})},
                    "total": {"type": "integer"}, "threshold": {"type": "number"},
                })), **errors("401", "422", "503", "507")},
            }},
            "/duplicates/nearest": {"get": {
                "summary": "Each fact's cosine with its nearest same-type neighbour, where that is at or above the review floor",
                "parameters": [query("type", TYPE_FILTER)],
                "responses": {**ok(obj({"nearest": {"type": "array", "items": obj({"id": {"type": "integer"}, "score": {"type": "number"}})},
                                        "floor": {"type": "number", "description": "facts whose nearest is below it are not listed"}})),
                              **errors("401", "422", "503", "507")},
            }},
            "/stats": {"get": {"summary": "Counts and orphans", "responses": {**ok(STATS), **errors("401")}}},
            "/metrics": {"get": {
                "summary": "The memory's figures for Prometheus",
                "description": "Prometheus' text format 0.0.4: memory_requests_total{route,method,status} and the "
                               "memory_request_seconds histogram{route} since the process (the Durable Object) started, "
                               "a route its pattern (/facts/{id}); memory_facts{status}, memory_unreviewed_facts, "
                               "memory_open_contradictions and memory_held_bytes now.",
                "responses": {"200": {"description": "OK", "content": {"text/plain": {"schema": {"type": "string"}}}},
                              **errors("401")},
            }},
            "/reindex": {"post": {
                "summary": "Rebuild the FTS index and every vector from the rows",
                "responses": {**ok(obj({"facts": {"type": "integer"}, "fts": {"type": "integer"},
                                        "vectors": {"type": "integer"}, "model": {"type": ["string", "null"]}})),
                              **errors("401", "503", "507")},
            }},
            **review_paths(),
        },
    }
