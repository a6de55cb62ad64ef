"""Numbered, append-only schema migrations. Never edit one that has shipped; add the next."""

from __future__ import annotations

import sqlite3
from collections.abc import Iterator
from contextlib import contextmanager

MIGRATIONS: list[str] = [
    # 1: facts are the source of truth; the FTS index and the vectors are derived from them
    # and kept in step by the engine, in the same transaction as the row.
    """
    CREATE TABLE facts (
        id INTEGER PRIMARY KEY AUTOINCREMENT,
        text TEXT NOT NULL,
        text_key TEXT NOT NULL,  -- casefolded text, for exact dedup
        type TEXT NOT NULL CHECK (type IN ('fact', 'skill', 'log')),
        source TEXT NOT NULL DEFAULT '',
        created_at TEXT NOT NULL,
        updated_at TEXT NOT NULL
    );
    CREATE INDEX facts_created ON facts (created_at DESC, id DESC);
    CREATE INDEX facts_type_key ON facts (type, text_key);
    -- A standalone (not external-content) index, so /stats can see an orphaned entry.
    CREATE VIRTUAL TABLE facts_fts USING fts5(text, tokenize = 'porter unicode61');
    CREATE TABLE vectors (
        fact_id INTEGER PRIMARY KEY,
        model TEXT NOT NULL,
        dims INTEGER NOT NULL,
        embedding BLOB NOT NULL  -- little-endian float32, dims values
    );
    """,
    # 2: near-duplicate pairs kept on write. Each same-type pair at or above the review floor,
    # once (a < b), written in the same transaction as the fact it comes from; `meta` holds the
    # floor they were built at (none yet: the engine builds them when it opens).
    # `vector_changes` logs, by trigger, every fact whose vector or type changed, so a snapshot
    # of the matrix (state.py) knows whether it is still the table's and which rows to patch.
    """
    CREATE TABLE pairs (
        a INTEGER NOT NULL,
        b INTEGER NOT NULL,
        type TEXT NOT NULL,
        score REAL NOT NULL,
        PRIMARY KEY (a, b)
    ) WITHOUT ROWID;
    -- (b, type, score) covers the nearest-neighbour histogram's scan
    CREATE INDEX pairs_b ON pairs (b, type, score);
    CREATE INDEX pairs_score ON pairs (score DESC, type);
    CREATE TABLE meta (key TEXT PRIMARY KEY, value);
    CREATE TABLE vector_changes (seq INTEGER PRIMARY KEY AUTOINCREMENT, fact_id INTEGER NOT NULL);
    INSERT INTO vector_changes (fact_id) VALUES (0);
    CREATE TRIGGER vectors_insert AFTER INSERT ON vectors BEGIN
        INSERT INTO vector_changes (fact_id) VALUES (NEW.fact_id); END;
    CREATE TRIGGER vectors_update AFTER UPDATE ON vectors BEGIN
        INSERT INTO vector_changes (fact_id) VALUES (NEW.fact_id); END;
    CREATE TRIGGER vectors_delete AFTER DELETE ON vectors BEGIN
        INSERT INTO vector_changes (fact_id) VALUES (OLD.fact_id); END;
    CREATE TRIGGER facts_type AFTER UPDATE OF type ON facts BEGIN
        INSERT INTO vector_changes (fact_id) VALUES (NEW.id); END;
    CREATE TRIGGER facts_delete AFTER DELETE ON facts BEGIN
        INSERT INTO vector_changes (fact_id) VALUES (OLD.id); END;
    """,
    # 3: the pairs as one row per fact (pairs.py): each pair once, in the row of its larger id,
    # so a new fact writes one row at the end instead of two random b-tree entries a pair. The
    # engine moves the old rows over when it opens (background.py `build_pairs`), then drops them.
    """
    ALTER TABLE pairs RENAME TO pairs_old;
    CREATE TABLE neighbours (
        fact_id INTEGER PRIMARY KEY,  -- the larger id of every pair in the row
        type TEXT NOT NULL,
        best REAL NOT NULL,  -- the highest score in the row: rows below a threshold are not decoded
        ids BLOB NOT NULL,  -- little-endian int64, ascending: the smaller ids
        scores BLOB NOT NULL  -- little-endian float32, one a pair
    );
    -- No index on best: reading rows in key order beat it at every threshold measured (100k
    -- facts: 0.05 s against 0.07 s at 0.97), and a new fact then writes nothing out of order.
    """,
    # 4: the vocabulary that query terms expand to (vocabulary.py). The engine fills it from the
    # facts when it opens a memory from before it, or one whose words another model embedded.
    """
    CREATE TABLE words (
        id INTEGER PRIMARY KEY,
        word TEXT NOT NULL UNIQUE,
        model TEXT NOT NULL,
        embedding BLOB NOT NULL  -- little-endian float32, unit length
    );
    """,
]


def migrate(conn: sqlite3.Connection) -> int:
    """Apply the migrations this database lacks, each in its own transaction."""
    conn.execute("CREATE TABLE IF NOT EXISTS schema_migrations (version INTEGER PRIMARY KEY, applied_at TEXT NOT NULL)")
    done = {row[0] for row in conn.execute("SELECT version FROM schema_migrations")}
    for version, sql in enumerate(MIGRATIONS, start=1):
        if version in done:
            continue
        with transaction(conn):
            for statement in sql.split(";\n"):
                if statement.strip():
                    conn.execute(statement)
            conn.execute(
                "INSERT INTO schema_migrations (version, applied_at) VALUES (?, datetime('now'))", (version,)
            )
    return len(MIGRATIONS)


@contextmanager
def transaction(conn: sqlite3.Connection) -> Iterator[sqlite3.Connection]:
    """BEGIN IMMEDIATE ... COMMIT, or ROLLBACK on any error: all of a write or none of it."""
    conn.execute("BEGIN IMMEDIATE")
    try:
        yield conn
    except BaseException:
        conn.execute("ROLLBACK")
        raise
    conn.execute("COMMIT")
