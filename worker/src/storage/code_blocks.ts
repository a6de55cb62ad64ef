// The codes the object holds in memory (vectors.ts), stored in SQLite beside the vectors and
// words tables (migration 6), so that a start reads one row a block of BLOCK facts or words
// instead of one row a fact and a word: rows read count against Cloudflare's daily allowance,
// and a big memory must answer its first request within seconds. Each write stores the blocks
// it changed inside its own transaction (state.ts `transact`), so they never fall behind the
// tables; the meta row 'codes' stamps them with the model, widths and row counts they hold, and a
// start checks it before it reads them (state.ts `load`).

import { BLOCK, FACT_BITS, type VectorIndex } from "./vectors";
import { WORD_BITS } from "./vocabulary";

type Kind = "facts" | "words";

/** What the stored blocks hold. `stale`: a memory past its budget deleted facts it did not
 * hold (state.ts `forget`), so its blocks are behind the table but its counts are right. */
export interface Stamp {
  model: string;
  dims: number;
  bits: number[];  // the facts' and the words' bits a dimension
  block: number;
  facts: number;
  words: number;
  stale: boolean;
}

const STAMP = "codes";  // its meta key

/** The stamp, if its blocks are of this model, widths and block size (null: none stored, or of
 * another, or unreadable). */
export function readStamp(sql: SqlStorage, model: string, dims: number): Stamp | null {
  const rows = sql.exec<{ value: string }>("SELECT value FROM meta WHERE key = ?", STAMP).toArray();
  let stamp: Stamp | null = null;
  try {
    stamp = rows.length ? JSON.parse(rows[0].value) : null;
  } catch {
    return null;
  }
  const ours = stamp?.model === model && stamp.dims === dims && stamp.block === BLOCK
    && stamp.bits?.[0] === FACT_BITS && stamp.bits?.[1] === WORD_BITS && Number.isInteger(stamp.facts) && Number.isInteger(stamp.words);
  return ours ? stamp : null;
}

export function writeStamp(sql: SqlStorage, stamp: Omit<Stamp, "bits" | "block">): void {
  sql.exec("INSERT OR REPLACE INTO meta (key, value) VALUES (?, ?)", STAMP, JSON.stringify({ ...stamp, bits: [FACT_BITS, WORD_BITS], block: BLOCK }));
}

/** The blocks both indexes changed since they were last stored, and their stamp, inside the
 * caller's transaction. */
export function storeCodes(sql: SqlStorage, model: string, dims: number, facts: VectorIndex, words: VectorIndex): void {
  const changed = storeBlocks(sql, "facts", facts);
  if (storeBlocks(sql, "words", words) || changed) writeStamp(sql, { model, dims, facts: facts.size, words: words.size, stale: false });
}

/** Both indexes (empty) from the stored blocks; false when the blocks do not hold the stamp's
 * counts, or lack the newest vector or word of its table (a cheap check, a row or two, that no
 * write went past them). */
export function readCodes(sql: SqlStorage, stamp: Stamp, facts: VectorIndex, words: VectorIndex): boolean {
  if (!readBlocks(sql, "facts", facts, stamp.facts) || !readBlocks(sql, "words", words, stamp.words)) return false;
  const newest = (query: string, ...args: SqlStorageValue[]) => sql.exec<{ id: number }>(query, ...args).toArray()[0]?.id ?? 0;
  const held = (index: VectorIndex) => index.ids.subarray(0, index.size).reduce((a, b) => Math.max(a, b), 0);
  // (the facts' index holds the vectors of facts only, as state.ts `rebuild` reads them)
  return newest("SELECT v.fact_id AS id FROM vectors v JOIN facts f ON f.id = v.fact_id WHERE v.model = ? AND v.dims = ? "
    + "ORDER BY v.fact_id DESC LIMIT 1", stamp.model, stamp.dims) === held(facts)
    && newest("SELECT id FROM words WHERE model = ? ORDER BY id DESC LIMIT 1", stamp.model) === held(words);
}

/** Store the blocks of `index` changed since it was last stored, and delete those past its end:
 * each changed block is written once, whatever the write did to it. Whether anything was written. */
function storeBlocks(sql: SqlStorage, kind: Kind, index: VectorIndex): boolean {
  const used = Math.ceil(index.size / index.block);
  let changed = false;
  if (index.storedBlocks > used) {
    sql.exec("DELETE FROM code_blocks WHERE kind = ? AND block >= ?", kind, used);
    changed = true;
  }
  for (const b of index.dirty) {
    if (b >= used) continue;
    const { ids, types, params, codes } = index.blockRows(b);
    sql.exec("INSERT OR REPLACE INTO code_blocks (kind, block, ids, types, params, codes) VALUES (?, ?, ?, ?, ?, ?)",
      kind, b, bytes(ids), bytes(types), bytes(params), bytes(codes));
    changed = true;
  }
  index.dirty.clear();
  index.storedBlocks = used;
  return changed;
}

/** The stored blocks of `kind` into `index` (empty), in order; false when they are not `rows`
 * rows in whole blocks of this width (the caller then builds it from the table instead). It
 * never holds more than `rows` rows, which the budget allowed for. */
function readBlocks(sql: SqlStorage, kind: Kind, index: VectorIndex, rows: number): boolean {
  index.grow(rows);  // allocated once
  let b = 0;
  try {
    for (const r of sql.exec("SELECT block, ids, types, params, codes FROM code_blocks WHERE kind = ? ORDER BY block", kind)) {
      const ids = new Float64Array(r.ids as ArrayBuffer);  // (a length that is no whole number of rows throws)
      if (r.block !== b++ || index.size + ids.length > rows || !index.appendBlock(ids, new Int8Array(r.types as ArrayBuffer),
        new Float32Array(r.params as ArrayBuffer), new Uint8Array(r.codes as ArrayBuffer))) return false;
    }
  } catch (e) {
    if (e instanceof RangeError) return false;
    throw e;
  }
  index.dirty.clear();
  index.storedBlocks = b;
  return index.size === rows;
}

/** A copy of a view's bytes, as a BLOB binds. */
const bytes = (view: ArrayBufferView) => new Uint8Array(view.buffer, view.byteOffset, view.byteLength).slice().buffer;
