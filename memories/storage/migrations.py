"""Numbered, append-only schema migrations. Never edit one that has shipped; add the next."""

from __future__ import annotations

import sqlite3
from collections.abc import Iterator
from contextlib import contextmanager

from ..facts import StoreError

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
    # 5: what was done to the memory, by which client (history.py), written in the same
    # transaction as each write; and the recall log (recall_log.py). Both keep their newest rows
    # only, trimmed by id in the transaction that adds one. The memory's own recall settings
    # live in meta ('settings').
    """
    CREATE TABLE history (
        id INTEGER PRIMARY KEY AUTOINCREMENT,
        at TEXT NOT NULL,
        client TEXT NOT NULL,
        op TEXT NOT NULL,  -- add, edit, delete, restore, settings
        fact_id INTEGER,
        before TEXT,  -- JSON: the fact (or the settings) before, or NULL
        after TEXT,  -- ... and after
        note TEXT NOT NULL DEFAULT '',
        undone_by INTEGER  -- the entry that undid this one
    );
    CREATE INDEX history_fact ON history (fact_id);
    CREATE TABLE recalls (
        id INTEGER PRIMARY KEY AUTOINCREMENT,
        at TEXT NOT NULL,
        client TEXT NOT NULL,
        query TEXT NOT NULL,
        type TEXT,
        mode TEXT NOT NULL,
        "limit" INTEGER NOT NULL,
        settings TEXT NOT NULL,  -- JSON: the fusion used
        results TEXT NOT NULL,  -- JSON: [{"id", "via", "score"}] in order
        model TEXT,
        ms REAL NOT NULL
    );
    """,
    # 6: GET /facts?order=updated (and updated_asc, read backwards) walks this instead of sorting
    # every matching fact.
    """
    CREATE INDEX facts_updated ON facts (updated_at DESC, id DESC);
    """,
    # 7: the database's identity, written once: the snapshot beside the file carries it and is
    # loaded only by the database it was made from (another file at the same path has its own).
    """
    INSERT OR IGNORE INTO meta (key, value) VALUES ('memory_id', lower(hex(randomblob(16))));
    """,
    # 8: the trash (the history's deletes) is kept apart from the other entries' pruning
    # (history.py PRUNE), which finds the newest deletes by this index.
    """
    CREATE INDEX history_op ON history (op, id);
    """,
    # 9: the fact lifecycle (lifecycle.py): a fact stops being current at its valid_until, and
    # names the fact that replaced it. Every existing fact stays current. Recall leaves out the
    # facts past their valid_until, found by facts_valid (partial: current facts are not in it).
    # `conflicts` holds each proposal a write made (old: the fact the new one may replace), and
    # the pairs the owner marked both true ('keep_both'), which are never proposed again.
    """
    ALTER TABLE facts ADD COLUMN valid_until TEXT;
    ALTER TABLE facts ADD COLUMN superseded_by INTEGER;
    CREATE INDEX facts_valid ON facts (valid_until) WHERE valid_until IS NOT NULL;
    CREATE TABLE conflicts (
        id INTEGER PRIMARY KEY AUTOINCREMENT,
        old INTEGER NOT NULL,
        new INTEGER NOT NULL,
        score REAL NOT NULL,
        differs TEXT NOT NULL,  -- JSON: lifecycle.differences
        resolution TEXT,  -- NULL: open; 'keep_both'
        UNIQUE (old, new)
    );
    CREATE INDEX conflicts_old ON conflicts (old);
    CREATE INDEX conflicts_new ON conflicts (new);
    """,
    # 10: the owner's review (reviewing.py): when the owner looked at a fact, or NULL. The facts
    # already there were the owner's to see before the inbox existed: reviewed at their creation.
    # The inbox walks facts_unreviewed (partial: it holds the unreviewed only).
    """
    ALTER TABLE facts ADD COLUMN reviewed_at TEXT;
    UPDATE facts SET reviewed_at = created_at;
    CREATE INDEX facts_unreviewed ON facts (created_at DESC, id DESC) WHERE reviewed_at IS NULL;
    """,
    # 11: a replaced fact's own validity (replacing.py), so taking the replacement back gives it
    # back exactly. Facts replaced before this kept none: NULL, no end of their own.
    """
    ALTER TABLE facts ADD COLUMN own_valid_until TEXT;
    CREATE INDEX facts_superseded_by ON facts (superseded_by) WHERE superseded_by IS NOT NULL;
    """,
]


def migrate(conn: sqlite3.Connection) -> int:
    """Apply the migrations this database lacks, each in its own transaction. Whether one is
    applied is read inside that transaction: two processes opening a new file at once take
    turns, and the second finds the first one's work done."""
    conn.execute("CREATE TABLE IF NOT EXISTS schema_migrations (version INTEGER PRIMARY KEY, applied_at TEXT NOT NULL)")
    for version, sql in enumerate(MIGRATIONS, start=1):
        with transaction(conn):
            if conn.execute("SELECT 1 FROM schema_migrations WHERE version = ?", (version,)).fetchone():
                continue
            for statement in sql.split(";\n"):
                if statement.strip():
                    conn.execute(statement)
            conn.execute(
                "INSERT INTO schema_migrations (version, applied_at) VALUES (?, datetime('now'))", (version,)
            )
    return len(MIGRATIONS)


class CommitFailed(StoreError):
    code, status = "commit_failed", 503


@contextmanager
def transaction(conn: sqlite3.Connection) -> Iterator[sqlite3.Connection]:
    """BEGIN IMMEDIATE ... COMMIT, or ROLLBACK on any error: all of a write or none of it. A
    COMMIT that fails (disk full, an I/O error) is rolled back too, or the connection would stay
    inside the transaction and refuse every later write."""
    conn.execute("BEGIN IMMEDIATE")
    try:
        yield conn
    except BaseException:
        if conn.in_transaction:  # (an I/O error may have ended it)
            conn.execute("ROLLBACK")
        raise
    try:
        conn.execute("COMMIT")
    except sqlite3.Error as e:
        if conn.in_transaction:
            conn.execute("ROLLBACK")
        raise CommitFailed(f"the write could not be committed ({e}): nothing of it was stored") from e
