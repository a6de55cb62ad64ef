// How a write lands (memories/writing.py): add, batch, edit, delete and reindex, with the exact
// and near duplicate checks that decide them, and the steps that write pairs and vocabulary,
// which the background work (background.ts) uses too.
//
// Every write changes row, FTS entry and vector inside one `transactionSync`. The object runs one
// event at a time, but an `await` (the embedding) opens its input gate to other requests, so
// every check that decides a write (duplicate? does the id still exist?) runs again inside the
// synchronous transaction, after the last await.

import type { Background } from "./background";
import { distinct } from "./dedup";
import { type Fact, MAX_BATCH, cleanId, cleanSource, cleanText, cleanTime, cleanType, stamp } from "./facts";
import { HttpError, invalid, tooLarge } from "./http";
import { vocabularyWords } from "./recall";
import type { Reader } from "./reading";
import { Part, type State } from "./state";
import { textKey } from "./text";
import type { FactType } from "./vectors";

const NEAR_CANDIDATES = 10;  // same-type neighbours over the threshold that dedup looks at

const blob = (v: Float32Array) => v.slice().buffer;  // little-endian float32, as state.py writes it
const round6 = (x: number) => Math.round(x * 1e6) / 1e6;

export class Writer extends Part {
  constructor(state: State, private reader: Reader, private background: Background) {
    super(state);
  }

  /** The texts' vectors, and those of their words the vocabulary lacks, in a call of their own
   * (writing.py `_embed_facts`). */
  private async embedFacts(texts: string[]): Promise<[Float32Array[], Map<string, Float32Array>]> {
    const missing = () => this.vocab.missing(texts);
    const [vectors, words] = await Promise.all([this.state.embed(texts), embedLacking(this.state, missing)]);
    return [vectors, await embedLacking(this.state, missing, words)];  // whatever went missing during the other call
  }

  /** The new words of stored texts into the vocabulary, inside their write (writing.py `_add_words`). */
  private addWords(texts: string[], vectors: Map<string, Float32Array>): void {
    const words = this.vocab.missing(texts);
    this.vocab.add(words, words.map((w) => vectors.get(w)!));
  }

  // -- duplicates -----------------------------------------------------------------------

  private exactDuplicate(text: string, type: FactType, exclude: number | null = null): [number, string, number] | null {
    const rows = this.sql.exec("SELECT id FROM facts WHERE type = ? AND text_key = ? AND id IS NOT ? LIMIT 1", type, textKey(text), exclude).toArray();
    return rows.length ? [rows[0].id as number, "exact", 1.0] : null;
  }

  /** [existing id, "exact" or "near", score] of a fact this one would duplicate. */
  private findDuplicate(text: string, type: FactType, vector: Float32Array, exclude: number | null = null,
    row: Float64Array | null = null): [number, string, number] | null {
    const exact = this.exactDuplicate(text, type, exclude);
    if (exact) return exact;
    // The nearest same-type facts at or above the threshold, best first; the first that does not
    // differ in a number, date, name or negation is the duplicate (dedup.ts says why). A row of
    // cosines already computed (for the pairs) gives the same candidates without a second scan.
    const near = (row ? this.over(row, this.state.threshold) : this.vectors.search(vector, type, NEAR_CANDIDATES, exclude))
      .filter(([, s]) => s >= this.state.threshold);
    if (!near.length) return null;
    const texts = this.reader.getMany(near.map(([id]) => id));
    const same = near.find(([id]) => texts.has(id) && distinct(text, texts.get(id)!.text) === null);
    return same ? [same[0], "near", same[1]] : null;
  }

  /** The NEAR_CANDIDATES best [id, cosine] of a row at or above `min`, ties by id, as search orders them. */
  private over(row: Float64Array, min: number): [number, number][] {
    const out: [number, number][] = [];
    for (let i = 0; i < row.length; i++) if (row[i] >= min) out.push([this.vectors.ids[i], row[i]]);
    return out.sort((x, y) => y[1] - x[1] || x[0] - y[0]).slice(0, NEAR_CANDIDATES);
  }

  // -- writes ---------------------------------------------------------------------------

  async addOne(data: Record<string, unknown>): Promise<Response> {
    const [r] = await this.addMany([data]);
    return Response.json(r.body, { status: r.status });
  }

  async addBatch(data: Record<string, unknown>) {
    const facts = data.facts;
    if (!Array.isArray(facts) || facts.some((f) => typeof f !== "object" || f === null || Array.isArray(f))) {
      throw invalid("facts must be a list of objects");
    }
    if (facts.length > MAX_BATCH) throw tooLarge(`a batch holds at most ${MAX_BATCH} facts`);
    return { results: (await this.addMany(facts)).map((r) => r.body) };
  }

  /** Store facts with dedup on write: each fact all or nothing, the batch one transaction. */
  private async addMany(items: Record<string, unknown>[]) {
    const clean = items.map((i) => ({
      text: cleanText(i.text),
      type: cleanType(i.type ?? "fact"),
      source: cleanSource(i.source ?? ""),
      created_at: cleanTime(i.created_at, "created_at"),
      updated_at: cleanTime(i.updated_at, "updated_at"),
      id: cleanId(i.id),
    }));
    const [vectors, words] = clean.length ? await this.embedFacts(clean.map((c) => c.text)) : [[], new Map()];
    // After the await: other writes may have landed meanwhile, so every check is made here.
    const added: number[] = [];
    const stored: string[] = [];
    try {
      const results = this.ctx.storage.transactionSync(() => {
        const out = clean.map((c, i) => {
          // One scan of the type's rows serves the dedup check and the pairs (earlier facts of the
          // batch are in the matrix already).
          const row = this.vectors.scores(vectors[i], c.type);
          const dup = this.findDuplicate(c.text, c.type, vectors[i], null, row);
          if (dup) {
            const fact = this.reader.get(dup[0]);
            return { status: 200, body: { id: fact.id, created: false, duplicate: { match: dup[1], score: round6(dup[2]) }, fact } };
          }
          const created = c.created_at ?? stamp(new Date());
          const updated = c.updated_at ?? created;
          if (c.id !== null && this.sql.exec("SELECT 1 FROM facts WHERE id = ?", c.id).toArray().length) {
            throw new HttpError(409, "id_taken", `fact id ${c.id} is in use by another fact`);
          }
          const id = this.sql.exec<{ id: number }>(
            "INSERT INTO facts (id, text, text_key, type, source, created_at, updated_at) VALUES (?, ?, ?, ?, ?, ?, ?) RETURNING id",
            c.id, c.text, textKey(c.text), c.type, c.source, created, updated,
          ).one().id;
          this.sql.exec("INSERT INTO facts_fts (rowid, text) VALUES (?, ?)", id, c.text);
          this.sql.exec("INSERT INTO vectors (fact_id, model, dims, embedding) VALUES (?, ?, ?, ?)",
            id, this.embedder.model, vectors[i].length, blob(vectors[i]));
          storePairs(this.state, id, c.type, row);
          this.vectors.put(id, c.type, vectors[i]);  // later facts of the batch dedup against it
          added.push(id);
          stored.push(c.text);
          const fact: Fact = { id, text: c.text, type: c.type, source: c.source, created_at: created, updated_at: updated };
          return { status: 201, body: { id, created: true, fact } };
        });
        this.addWords(stored, words);
        return out;
      });
      this.vocab.load();
      return results;
    } catch (e) {
      for (const id of added) this.vectors.remove(id);  // the transaction rolled back: so does the matrix
      throw e;
    }
  }

  async edit(id: number, data: Record<string, unknown>): Promise<Fact> {
    const old = this.reader.get(id);
    const text = "text" in data ? cleanText(data.text) : null;
    const type = "type" in data ? cleanType(data.type) : null;
    const source = "source" in data ? cleanSource(data.source) : null;
    let [[vector], words] = text !== null && text !== old.text ? await this.embedFacts([text]) : [[null], new Map()];
    let current = this.reader.get(id);  // after the await: it may have changed or gone
    if (text !== null && text !== current.text && vector === null) {
      [[vector], words] = await this.embedFacts([text]);  // the text changed under us since we looked
      current = this.reader.get(id);
    }
    const next = { text: text ?? current.text, type: type ?? current.type, source: source ?? current.source };
    const reembed = next.text !== current.text;
    if (reembed && vector === null) throw new HttpError(503, "model_unavailable", "the fact changed while this edit was made: try again");
    const v = reembed ? vector! : this.vectors.vector(id);
    // One row of cosines serves the duplicate check and the fact's new pairs.
    const row = (reembed || next.type !== current.type) && v ? this.vectors.scores(v, next.type) : null;
    if (row && this.vectors.row.has(id)) row[this.vectors.row.get(id)!] = -Infinity;  // not its own duplicate
    if (row) {
      const dup = this.findDuplicate(next.text, next.type, v!, id, row);
      if (dup) {
        const existing = this.reader.get(dup[0]);
        throw new HttpError(409, "duplicate", `this edit would duplicate fact ${existing.id} (${dup[1]} match, score ${dup[2].toFixed(3)})`,
          { existing, match: dup[1], score: dup[2] });
      }
    }
    const updated = stamp(new Date());
    this.ctx.storage.transactionSync(() => {
      this.sql.exec("UPDATE facts SET text = ?, text_key = ?, type = ?, source = ?, updated_at = ? WHERE id = ?",
        next.text, textKey(next.text), next.type, next.source, updated, id);
      if (reembed) {
        this.sql.exec("DELETE FROM facts_fts WHERE rowid = ?", id);
        this.sql.exec("INSERT INTO facts_fts (rowid, text) VALUES (?, ?)", id, next.text);
        this.sql.exec("INSERT OR REPLACE INTO vectors (fact_id, model, dims, embedding) VALUES (?, ?, ?, ?)",
          id, this.embedder.model, v!.length, blob(v!));
        this.addWords([next.text], words);
      }
      if (row) {  // its pairs are those of its new text and type
        this.sql.exec("DELETE FROM pairs WHERE a = ? OR b = ?", id, id);
        storePairs(this.state, id, next.type, row);
      }
    });
    if (v) this.vectors.put(id, next.type, reembed ? v : v.slice());
    this.vocab.load();
    return { id, ...next, created_at: current.created_at, updated_at: updated };
  }

  delete(id: number) {
    const fact = this.reader.get(id);
    this.ctx.storage.transactionSync(() => {
      this.sql.exec("DELETE FROM facts WHERE id = ?", id);
      this.sql.exec("DELETE FROM facts_fts WHERE rowid = ?", id);
      this.sql.exec("DELETE FROM vectors WHERE fact_id = ?", id);
      this.sql.exec("DELETE FROM pairs WHERE a = ? OR b = ?", id, id);
    });
    this.vectors.remove(id);
    return { deleted: id, fact };
  }

  async reindex() {
    const rows = this.sql.exec("SELECT id, text, type FROM facts ORDER BY id").toArray();
    const vectors: Float32Array[] = [];
    for (let i = 0; i < rows.length; i += MAX_BATCH) vectors.push(...(await this.state.embed(rows.slice(i, i + MAX_BATCH).map((r) => r.text as string))));
    const words = await embedLacking(this.state, () => factWords(this.state));  // the last await
    // Facts written while we embedded have their own fresh vectors already; rebuild the rest.
    this.ctx.storage.transactionSync(() => {
      this.sql.exec("DELETE FROM facts_fts");
      this.sql.exec("INSERT INTO facts_fts (rowid, text) SELECT id, text FROM facts");
      rows.forEach((r, i) => {
        const now = this.sql.exec("SELECT text FROM facts WHERE id = ?", r.id).toArray()[0];
        if (now && now.text === r.text) {
          this.sql.exec("INSERT OR REPLACE INTO vectors (fact_id, model, dims, embedding) VALUES (?, ?, ?, ?)",
            r.id, this.embedder.model, vectors[i].length, blob(vectors[i]));
        }
      });
      this.sql.exec("DELETE FROM vectors WHERE fact_id NOT IN (SELECT id FROM facts)");
      resetPairs(this.state);  // every vector may have changed: the pairs are filled in again
      rebuildVocabulary(this.state, words);
    });
    this.state.loadVectors();
    this.vocab.reload();
    await this.background.fillPairs();
    const n = this.reader.count();
    return { facts: n, fts: n, vectors: this.vectors.size, model: this.embedder.model };
  }
}

// -- the steps the writes and the background work (background.ts) share ----------------

/** Vectors of words, each word embedded alone, in calls of their own. */
async function embedWords(state: State, words: string[]): Promise<Float32Array[]> {
  const out: Float32Array[] = [];
  for (let i = 0; i < words.length; i += MAX_BATCH) out.push(...(await state.embed(words.slice(i, i + MAX_BATCH))));
  return out;
}

/** `have` with a vector for each of `words()`, read again after each await: a write that lands
 * meanwhile, or a reindex, may change what is lacking. Nothing lacks when it returns, so a
 * transaction right after it finds every vector it needs. */
export async function embedLacking(state: State, words: () => string[], have = new Map<string, Float32Array>()): Promise<Map<string, Float32Array>> {
  for (let lacking = words().filter((w) => !have.has(w)); lacking.length; lacking = words().filter((w) => !have.has(w))) {
    const vectors = await embedWords(state, lacking);
    lacking.forEach((w, i) => have.set(w, vectors[i]));
  }
  return have;
}

/** A fact's same-type neighbours at or above the floor, from its row of cosines, into pairs. */
export function storePairs(state: State, id: number, type: FactType, row: Float64Array, keep: (other: number) => boolean = () => true): void {
  const { ids } = state.vectors;
  for (let i = 0; i < row.length; i++) {
    const other = ids[i];
    if (row[i] >= state.floor && other !== id && keep(other)) {
      state.sql.exec("INSERT OR REPLACE INTO pairs (a, b, type, score) VALUES (?, ?, ?, ?)", Math.min(id, other), Math.max(id, other), type, row[i]);
    }
  }
}

/** No pairs, and every fact up to the newest now to be filled in, inside a write (background.ts
 * `fillPairs` fills them). */
export function resetPairs(state: State): void {
  state.sql.exec("DELETE FROM pairs");
  state.setMeta("pairs_floor", state.floor);
  state.setMeta("pairs_upto", 0);
  state.setMeta("pairs_target", state.sql.exec<{ n: number }>("SELECT coalesce(max(id), 0) AS n FROM facts").one().n);
}

/** Every word of the facts, each once (the vocabulary a rebuild writes). */
export function factWords(state: State): string[] {
  return [...new Set(state.sql.exec<{ text: string }>("SELECT text FROM facts ORDER BY id").toArray().flatMap((r) => vocabularyWords(r.text)))];
}

/** The vocabulary as the facts' words, inside a write (then `vocab.reload`). */
export function rebuildVocabulary(state: State, vectors: Map<string, Float32Array>): void {
  const words = factWords(state);
  state.vocab.clear();
  state.vocab.add(words, words.map((w) => vectors.get(w)!));
  state.setMeta("words_model", state.embedder.model);
}
