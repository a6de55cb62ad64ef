// The memory's own words, each embedded alone: what a query term expands to (recall.ts
// `expand`), as memories/storage/vocabulary.py keeps them. A word joins in the transaction of the first
// fact that holds it and stays (a word no fact holds any more matches nothing, and recall drops
// it). The table is the truth: it answers which words are new and what a word's vector is; in
// memory are only the words' compact codes (vectors.ts), keyed by their row id in the table, for
// the closest words to a query term. The index reads the rows it lacks at the end of each write's
// transaction, which stores its changed blocks too (state.ts `transact`); should that transaction
// fail, the index is read again from what storage rolled back to.

import { byKey, vectorsById } from "./by_key";
import { vocabularyWords } from "../recall/ranking";
import { VectorIndex } from "./vectors";

export const CANDIDATES = 8;  // closest words per query term handed to `expand`, which keeps at most 3
export const WORD_BITS = 4;  // bits a dimension of a word's code
export const WORD_RESCORE = 100;  // words rescored past the CANDIDATES (benchmarks/worker_capacity.py)

export class Vocabulary {
  // The words' codes, each row keyed by the word's id in the table (append-only: no row map).
  index: VectorIndex;
  last = 0;  // the highest row id read
  off = false;  // holding none (`empty`) until `reload`

  constructor(private sql: SqlStorage, private model: string, private dims: number) {
    this.index = this.newIndex();
  }

  /** An empty index over the words table (by id, this model's words only). */
  newIndex(): VectorIndex {
    const index = new VectorIndex(this.dims, (ids) => vectorsById(this.sql, "words", "id", ids, "t.model = ?", this.model),
      WORD_BITS, undefined, WORD_RESCORE);
    index.appendOnly = true;
    return index;
  }

  /** How many words are held. */
  get size(): number {
    return this.index.size;
  }

  /** Read the words written since the last call (each word is one row: the table's words are unique). */
  load(): void {
    if (this.off) return;
    const rows = this.sql.exec("SELECT id, embedding FROM words WHERE id > ? AND model = ? ORDER BY id", this.last, this.model);
    for (const r of rows) {
      this.last = r.id as number;
      this.index.put(r.id as number, "fact", new Float32Array(r.embedding as ArrayBuffer));
    }
  }

  /** The words held, in the order read (a test compares them with the table). */
  held(): string[] {
    const ids = [...this.index.ids.subarray(0, this.index.size)];
    const words = new Map([...byKey(this.sql, "t.id, t.word", "words", "id", ids)].map((r) => [r.id as number, r.word as string]));
    return ids.map((id) => words.get(id)!);
  }

  /** The bytes the vocabulary holds: its index's, exactly (no map, no strings). */
  bytes(): number {
    return this.index.bytes();
  }

  /** The bytes it would hold with `more` words. */
  bytesWith(more: number): number {
    return this.index.bytesWith(more);
  }

  /** Read every word again (after the table was rebuilt). */
  reload(): void {
    this.index = this.newIndex();
    this.last = 0;
    this.off = false;
    this.load();
  }

  /** Hold `index`, read from the stored blocks (code_blocks.ts), as the words read so far. */
  use(index: VectorIndex): void {
    this.index = index;
    this.last = index.size ? index.ids[index.size - 1] : 0;
    this.off = false;
  }

  /** Hold no word (a memory past its budget: state.ts). */
  empty(): void {
    this.index = this.newIndex();
    this.last = 0;
    this.off = true;
  }

  /** The words of `texts` the table lacks for this model, each once, in order (all of them while `off`). */
  missing(texts: string[]): string[] {
    const words = [...new Set(texts.flatMap(vocabularyWords))];
    if (this.off || !words.length) return words;
    const have = new Set([...byKey(this.sql, "t.word", "words", "word", words, "t.model = ?", this.model)].map((r) => r.word as string));
    return words.filter((w) => !have.has(w));
  }

  /** The stored vectors of those `words` the vocabulary holds: a query term the memory already
   * uses needs no model call (each word was embedded alone, as a query term is; writing.py too). */
  vectors(words: string[]): Map<string, Float32Array> {
    if (this.off || !words.length) return new Map();
    return new Map([...byKey(this.sql, "t.word, t.embedding", "words", "word", words, "t.model = ?", this.model)]
      .map((r) => [r.word as string, new Float32Array(r.embedding as ArrayBuffer)]));
  }

  /** Store words inside the caller's write transaction (a word already there is kept). */
  add(words: string[], vectors: Float32Array[]): void {
    words.forEach((w, i) => this.sql.exec("INSERT OR IGNORE INTO words (word, model, embedding) VALUES (?, ?, ?)",
      w, this.model, vectors[i].slice().buffer));
  }

  /** Forget every word, inside a write (a `reload` after it commits). */
  clear(): void {
    this.sql.exec("DELETE FROM words");
  }

  /** For each term vector, its CANDIDATES closest words with their exact cosines. */
  closest(termVectors: Float32Array[]): [string, number][][] {
    const found = termVectors.map((q) => this.index.search(q, null, CANDIDATES));
    const ids = [...new Set(found.flat().map(([id]) => id))];
    const words = new Map([...byKey(this.sql, "t.id, t.word", "words", "id", ids)].map((r) => [r.id as number, r.word as string]));
    return found.map((hits) => hits.map(([id, s]): [string, number] => [words.get(id)!, s]));
  }
}
