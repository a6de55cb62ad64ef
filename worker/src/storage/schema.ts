// Numbered, append-only migrations of the object's own SQLite, as memories/storage/migrations.py keeps
// the local memory's: never edit one that has shipped; add the next.

export const MIGRATIONS: string[] = [
  // 1: facts are the source of truth; the FTS index and the vectors are derived from them and
  // kept in step by the object, in the same transaction as the row.
  `CREATE TABLE facts (
     id INTEGER PRIMARY KEY AUTOINCREMENT,
     text TEXT NOT NULL,
     text_key TEXT NOT NULL,
     type TEXT NOT NULL CHECK (type IN ('fact', 'skill', 'log')),
     source TEXT NOT NULL DEFAULT '',
     created_at TEXT NOT NULL,
     updated_at TEXT NOT NULL
   );
   CREATE INDEX facts_created ON facts (created_at DESC, id DESC);
   CREATE INDEX facts_type_key ON facts (type, text_key);
   CREATE VIRTUAL TABLE facts_fts USING fts5(text, tokenize = 'porter unicode61');
   CREATE TABLE vectors (
     fact_id INTEGER PRIMARY KEY,
     model TEXT NOT NULL,
     dims INTEGER NOT NULL,
     embedding BLOB NOT NULL
   );
   -- Durable Objects allow no temp tables: stemming a probe text ("why this rank?") goes
   -- through this table, written and emptied inside one synchronous step.
   CREATE VIRTUAL TABLE probe USING fts5(text, tokenize = 'porter unicode61');
   CREATE VIRTUAL TABLE probe_terms USING fts5vocab(probe, instance);
   CREATE VIRTUAL TABLE fts_terms USING fts5vocab(facts_fts, instance);`,
  // 2: near-duplicate pairs kept on write, as migration 2 of memories/storage/migrations.py: each
  // same-type pair at or above the review floor, once (a < b), written in the same transaction
  // as the fact it comes from. `meta` holds the floor they are kept at and how far the pairs
  // of facts stored before this table have been filled in (background.ts `fillPairs`).
  `CREATE TABLE pairs (
     a INTEGER NOT NULL,
     b INTEGER NOT NULL,
     type TEXT NOT NULL,
     score REAL NOT NULL,
     PRIMARY KEY (a, b)
   ) WITHOUT ROWID;
   CREATE INDEX pairs_b ON pairs (b, type, score);
   CREATE INDEX pairs_score ON pairs (score DESC, type);
   CREATE TABLE meta (key TEXT PRIMARY KEY, value);`,
  // 3: the vocabulary that query terms expand to (vocabulary.ts), as migration 4 of
  // memories/storage/migrations.py. The object fills it from the facts when it opens a memory from
  // before it, or one whose words another model embedded (background.ts `vocabulary`).
  `CREATE TABLE words (
     id INTEGER PRIMARY KEY,
     word TEXT NOT NULL UNIQUE,
     model TEXT NOT NULL,
     embedding BLOB NOT NULL  -- little-endian float32, unit length
   );`,
  // 4: what was done to the memory, by which client (history.ts), written in the same
  // transaction as each write; and the recall log (recall_log.ts), as migration 5 of
  // memories/storage/migrations.py. Both keep their newest rows only, trimmed by id in the transaction
  // that adds one. The memory's own recall settings live in meta ('settings').
  `CREATE TABLE history (
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
   );`,
  // 5: GET /facts?order=updated (and updated_asc, read backwards) walks this instead of sorting
  // every matching fact, as migration 6 of memories/storage/migrations.py.
  `CREATE INDEX facts_updated ON facts (updated_at DESC, id DESC);`,
  // 6: the codes held in memory (vectors.ts) of the facts and of the words, a row a block of
  // 256 rows, written in the transaction of each write that changes them, so a start reads these
  // few rows and not every vector (code_blocks.ts). Meta 'codes' stamps what they hold. A memory
  // from before this has none: its next start builds them from the tables.
  `CREATE TABLE code_blocks (
     kind TEXT NOT NULL,  -- 'facts' or 'words'
     block INTEGER NOT NULL,  -- its rows are those from block * 256 in memory
     ids BLOB NOT NULL,  -- float64 a row
     types BLOB NOT NULL,  -- int8 a row: 0 fact, 1 skill, 2 log
     params BLOB NOT NULL,  -- float32 lo, step and err a row
     codes BLOB NOT NULL,  -- the rows' codes, bits a dimension
     PRIMARY KEY (kind, block)
   ) WITHOUT ROWID;`,
  // 7: the trash (the history's deletes) is pruned apart from the other entries (history.ts
  // `record`), which finds the newest deletes by this index.
  `CREATE INDEX history_op ON history (op, id);`,
  // 8: the fact lifecycle (lifecycle.ts), as migration 9 of memories/storage/migrations.py: a fact stops
  // being current at its valid_until and names the fact that replaced it; every existing fact
  // stays current. Recall leaves out the facts past their valid_until, found by facts_valid
  // (partial: current facts are not in it). `conflicts` holds each proposal a write made (old:
  // the fact the new one may replace) and the pairs the owner marked both true ('keep_both'),
  // which are never proposed again.
  `ALTER TABLE facts ADD COLUMN valid_until TEXT;
   ALTER TABLE facts ADD COLUMN superseded_by INTEGER;
   CREATE INDEX facts_valid ON facts (valid_until) WHERE valid_until IS NOT NULL;
   CREATE TABLE conflicts (
     id INTEGER PRIMARY KEY AUTOINCREMENT,
     old INTEGER NOT NULL,
     new INTEGER NOT NULL,
     score REAL NOT NULL,
     differs TEXT NOT NULL,  -- JSON: lifecycle.ts differences
     resolution TEXT,  -- NULL: open; 'keep_both'
     UNIQUE (old, new)
   );
   CREATE INDEX conflicts_old ON conflicts (old);
   CREATE INDEX conflicts_new ON conflicts (new);`,
  // 9: the owner's review (reviewing.ts), as migration 10 of memories/storage/migrations.py: when the
  // owner looked at a fact, or NULL. The facts already there were the owner's to see before the
  // inbox existed: reviewed at their creation. The inbox walks facts_unreviewed (partial: it
  // holds the unreviewed only), and so does recall when the review is "before" (lifecycle.ts `hidden`).
  `ALTER TABLE facts ADD COLUMN reviewed_at TEXT;
   UPDATE facts SET reviewed_at = created_at;
   CREATE INDEX facts_unreviewed ON facts (created_at DESC, id DESC) WHERE reviewed_at IS NULL;`,
  // 10: counts a recall and a page read in a row, whatever the memory's size (term_counts.ts).
  // fts_rows is FTS5's own record of how many rows hold each term, kept by FTS5 in every write's
  // transaction; fact_counts holds the facts of each type, kept by the triggers in the transaction
  // of every insert, delete and change of type, whichever write path makes it. (Each trigger on
  // one line: migrate splits a script at ";" and a newline.)
  `CREATE VIRTUAL TABLE fts_rows USING fts5vocab(facts_fts, row);
   CREATE TABLE fact_counts (type TEXT PRIMARY KEY, n INTEGER NOT NULL) WITHOUT ROWID;
   INSERT INTO fact_counts (type, n) SELECT t.column1, (SELECT count(*) FROM facts WHERE type = t.column1) FROM (VALUES ('fact'), ('skill'), ('log')) AS t;
   CREATE TRIGGER fact_counted AFTER INSERT ON facts BEGIN UPDATE fact_counts SET n = n + 1 WHERE type = NEW.type; END;
   CREATE TRIGGER fact_uncounted AFTER DELETE ON facts BEGIN UPDATE fact_counts SET n = n - 1 WHERE type = OLD.type; END;
   CREATE TRIGGER fact_recounted AFTER UPDATE OF type ON facts WHEN OLD.type IS NOT NEW.type BEGIN UPDATE fact_counts SET n = n - 1 WHERE type = OLD.type; UPDATE fact_counts SET n = n + 1 WHERE type = NEW.type; END;`,
  // 11: a replaced fact's own validity (replacing.ts), as migration 11 of memories/storage/migrations.py,
  // so taking the replacement back gives it back exactly. Facts replaced before this kept none:
  // NULL, no end of their own. facts_superseded_by finds what a fact replaces (partial: only those).
  `ALTER TABLE facts ADD COLUMN own_valid_until TEXT;
   CREATE INDEX facts_superseded_by ON facts (superseded_by) WHERE superseded_by IS NOT NULL;`,
];

export function migrate(sql: SqlStorage, storage: DurableObjectStorage): void {
  sql.exec("CREATE TABLE IF NOT EXISTS schema_migrations (version INTEGER PRIMARY KEY, applied_at TEXT NOT NULL)");
  const done = new Set(sql.exec<{ version: number }>("SELECT version FROM schema_migrations").toArray().map((r) => r.version));
  MIGRATIONS.forEach((script, i) => {
    const version = i + 1;
    if (done.has(version)) return;
    storage.transactionSync(() => {
      for (const statement of script.split(";\n")) if (statement.trim()) sql.exec(statement);
      sql.exec("INSERT INTO schema_migrations (version, applied_at) VALUES (?, datetime('now'))", version);
    });
  });
}
